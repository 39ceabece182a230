package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui"
	"github.com/bucketctl/bucketctl/tui/format"
)

func loadRun(opts *LoadOptions) (err error) {
	f, ctx := opts.src, opts.Ctx
	conn, err := f.Conn()
	if err != nil {
		return err
	}
	conn.PoolSize = max(conn.PoolSize, opts.Config.Concurrency+4)
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	plans, configs, refused := loadPlans(ctx, st.Redis(), opts)
	if opts.DryRun && (refused == nil || errors.Is(refused, load.ErrNotBucket)) {
		return loadDryRun(f, opts, plans, refused)
	}
	if refused != nil {
		if errors.Is(refused, load.ErrNotBucket) {
			return fmt.Errorf("%w; load-test a key of its own (KEY without --raw-key is bucketctl:load:KEY)", refused)
		}
		return refused
	}
	if err := confirmLoad(f, opts, plans); err != nil {
		return err
	}
	runs := &load.Session{}
	if !opts.Keep {
		var created []string
		for _, p := range plans {
			if !p.Target.Exists() {
				created = append(created, p.Target.Key)
			}
		}
		defer func() { // a key left behind matters more than how the run ended
			within := max(time.Until(runs.Ended().Add(load.AfterRunGrace)), 0)
			if cerr := loadCleanup(st.Redis(), created, within); cerr != nil {
				if _, silent := errors.AsType[*SilentError](err); err != nil && !silent && !rediserr.IsUnreachable(err) {
					cerr = fmt.Errorf("%v; and %w", err, cerr)
				}
				err = cerr
			}
		}()
	}
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	workers, closeWorkers := workerStore(conn, st, opts.Config.Concurrency)
	defer closeWorkers()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if n := loadProcs(conn.Addr(), os.Getenv("GOMAXPROCS"), runtime.GOMAXPROCS(0)); n > 0 {
			runtime.GOMAXPROCS(n)
			defer runtime.SetDefaultGOMAXPROCS()
		}
		runs.Run(stopCtx, workers, configs, conn.Addr())
	}()

	width := reportWidth
	if f.IO.StdoutTTY && f.IO.StderrTTY {
		w, err := loadLive(ctx, f, opts, runs, stop, done)
		if err != nil {
			return err
		}
		width = min(width, w)
	} else {
		loadPlain(f, opts, runs, done)
	}

	reports, runErr := runs.Result()
	if err := output.PrintLoad(f.IO, opts.Output, opts.Compare, tuiStyles(f.IO), reports, width); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if slices.ContainsFunc(reports, func(r load.Report) bool { return r.Interrupted }) {
		return &SilentError{Code: ExitInterrupted}
	}
	if failed, _ := load.Failed(reports); failed > 0 {
		perr := load.Within(ctx, max(time.Until(runs.Ended().Add(load.AfterRunGrace)), 10*time.Millisecond), func(ctx context.Context) error {
			return st.Redis().Ping(ctx).Err()
		})
		if perr != nil && rediserr.IsUnreachable(perr) {
			return fmt.Errorf("Redis at %s became unreachable during the run (%s): %w", conn.Addr(), failedCount(reports), perr)
		}
	}
	for _, r := range reports {
		if r.Requests > 0 && r.Errors == r.Requests {
			return everyRequestFailed(f, r)
		}
	}
	return nil
}

// loadProcs leaves a server on this machine one of the default processors ('help
// performance'); 0 (no change) for a remote server or when GOMAXPROCS is set.
func loadProcs(addr, gomaxprocs string, procs int) int {
	if gomaxprocs != "" || !isLocal(addr) {
		return 0
	}
	return max(1, procs-1)
}

func isLocal(addr string) bool {
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// everyRequestFailed is worded as consume's refused write.
func everyRequestFailed(f *Factory, r load.Report) error {
	what := "load " + format.QuoteKey(r.Key)
	if len(r.ErrorSamples) == 0 {
		return fmt.Errorf("%s on %s: every request failed", what, serverOf(f))
	}
	return newWriteError(what, serverOf(f), "(every request failed)", sampleReply(r.ErrorSamples[0].Message))
}

// sampleReply is a report's error sample as the server's error reply it was.
type sampleReply string

func (s sampleReply) Error() string { return string(s) }
func (sampleReply) RedisError()     {}

// failedCount says how many requests failed: "1,204 of 3,000 requests failed".
func failedCount(reports []load.Report) string {
	failed, total := load.Failed(reports)
	return fmt.Sprintf("%s of %s requests failed", format.GroupDigits(int(failed)), format.GroupDigits(int(total)))
}

// loadLive runs the live view on stderr until the runs are done, and returns the terminal's width.
func loadLive(ctx context.Context, f *Factory, opts *LoadOptions, runs *load.Session, stop func(), done <-chan struct{}) (int, error) {
	styles := tuiStyles(f.IO)
	var order []load.Strategy
	if opts.Compare {
		order = load.Strategies
	}
	m := tui.NewLoad(runs.Snapshot, tui.LoadOptions{Title: opts.describe(), Runs: order, Styles: &styles, Stop: stop})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.ErrOut))
	go func() {
		<-done
		p.Send(tui.LoadDoneMsg{})
	}()
	final, err := p.Run()
	// The view may end early (a second q, a signal): stop the run and wait for it.
	stop()
	<-done
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		return 0, err
	}
	w := reportWidth
	if lm, ok := final.(tui.Load); ok && lm.Width() > 0 {
		w = lm.Width()
	}
	return w, nil
}

// loadPlain prints a progress line just after each whole second of the run.
func loadPlain(f *Factory, opts *LoadOptions, runs *load.Session, done <-chan struct{}) {
	timer := time.NewTimer(plainWait(runs.Snapshot()))
	defer timer.Stop()
	var last load.Strategy
	lastSec := 0
	for {
		select {
		case <-done:
			return
		case <-timer.C:
		}
		s := runs.Snapshot()
		if sec := int(s.Elapsed / time.Second); s.Running && sec > 0 && (sec != lastSec || s.Strategy != last) {
			last, lastSec = s.Strategy, sec
			line := tui.LoadProgressLine(s)
			if opts.Compare {
				line = "[" + string(s.Strategy) + "] " + line
			}
			fmt.Fprintln(f.IO.ErrOut, line)
		}
		timer.Reset(plainWait(s)) // s is microseconds old: the wait still ends just after the second
	}
}

func plainWait(s load.Snapshot) time.Duration {
	const margin = 10 * time.Millisecond // the answers of the second's last moments are recorded
	if !s.Running {
		return 20 * time.Millisecond
	}
	return s.Elapsed.Truncate(time.Second) + time.Second + margin - s.Elapsed
}

// reportWidth is the printed report's width, at most the terminal's.
const reportWidth = 80

// workerStore gives the workers a RESP2 client of their own on a standalone server: one
// connection each, no socket peek per request, and against a local server a yield before
// each read.
func workerStore(conn *connect.Server, st *bucket.Store, workers int) (*bucket.Store, func()) {
	c, ok := st.Redis().(*redis.Client)
	if !ok || c.Options().Addr == "FailoverClient" {
		return st, func() {}
	}
	opt := *c.Options()
	opt.Protocol, opt.PoolSize = 2, workers+4
	if isLocal(conn.Addr()) { // where a reply can arrive while the others run
		opt.Dialer = connect.YieldBeforeReads(opt.Dialer)
	}
	wc := conn.NodeClient(&opt)
	return st.Through(wc), func() { _ = wc.Close() }
}
