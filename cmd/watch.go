package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui"
	"github.com/bucketctl/bucketctl/tui/format"
)

type WatchOptions struct {
	Env
	Key      string
	Interval time.Duration
	Count    int
	Duration time.Duration
	Window   time.Duration
	Spec     SpecFlags
	Output   string
}

func NewCmdWatch(f *Factory, runF func(*WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch KEY",
		Short: "Watch one bucket live: tokens, chart, allowed/denied per second, retry-after, TTL",
		Long:  commandHelp("watch"),
		Example: `  bucketctl watch rate:user:42
  bucketctl watch rate:user:42 --interval 250ms --window 1m
  bucketctl watch api:ip:10.1.2.3 --layout express --capacity 100 --rate 10
  bucketctl watch rate:user:42 --count 60 -o json >> bucket.log
  bucketctl watch rate:user:42 --count 3 -o yaml
  bucketctl watch rate:user:42 --duration 5m | grep denied`,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("watch needs exactly one KEY (see 'bucketctl watch --help'; for many buckets use 'bucketctl top')")
			}
			opts.Key = args[0]
			if opts.Key == "" {
				return usagef("the key is empty: name the bucket to watch")
			}
			if err := firstErr(atLeast("--interval", opts.Interval, 10*time.Millisecond), notNegative("--count", opts.Count, "until stopped"),
				notNegative("--duration", opts.Duration, "until stopped")); err != nil {
				return err
			}
			if opts.Window < opts.Interval {
				return usagef("--window %s: must be at least the interval %s", opts.Window, opts.Interval)
			}
			f.Check = connect.PingByPipeline
			return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, watchRun)
		},
	}
	fl := cmd.Flags()
	durationVarP(fl, &opts.Interval, "interval", "i", time.Second, "time between refreshes")
	intVarP(fl, &opts.Count, "count", "n", 0, "stop after this many refreshes, printing one line each (0 = until stopped)")
	durationVarP(fl, &opts.Duration, "duration", "", 0, "stop after this long (0 = until stopped)")
	durationVarP(fl, &opts.Window, "window", "", 5*time.Minute, "history the live chart shows")
	opts.Spec.register(cmd, f, true)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func watchRun(opts *WatchOptions) error {
	var cancel context.CancelFunc
	opts.Ctx, cancel = withDuration(opts.Ctx, opts.Duration)
	defer cancel()
	ctx, f := opts.Ctx, opts.src
	rd, err := opts.reading(&opts.Spec)
	if err != nil {
		return err
	}
	read := func(ctx context.Context) (bucket.State, error) {
		states, err := rd.st.InspectWith(ctx, []string{opts.Key}, rd.resolve, rd.custom)
		if err != nil {
			return bucket.State{}, err
		}
		return states[0], nil
	}
	// A key that is not a bucket is an error at once (one that becomes one is shown).
	if first, err := read(ctx); err == nil && first.IsNotBucket() {
		return fmt.Errorf("%s: %s: watch shows buckets", safe(opts.Key), safe(first.Problem))
	}
	cost := rd.resolve(opts.Key).Cost
	if !f.IO.StdoutTTY || opts.Output != output.FormatTable || opts.Count > 0 {
		return endedByDuration(ctx, watchStream(ctx, f.IO, opts, cost, rd.conn.Addr(), read))
	}
	styles := tuiStyles(f.IO)
	m := tui.NewWatch(read, tui.WatchOptions{Key: opts.Key, LiveOptions: tui.LiveOptions{Addr: rd.conn.Addr(),
		Server: rd.conn.Label(), Interval: opts.Interval, Window: opts.Window, Cost: cost, Styles: &styles, ErrText: f.errText}})
	return endedByDuration(ctx, runProgram(ctx, f.IO, m))
}

// withDuration bounds ctx by --duration (0: no bound).
func withDuration(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

func runProgram(ctx context.Context, io *IOStreams, m tea.Model) error {
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(io.In), tea.WithOutput(io.Out))
	_, err := p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// endedByDuration turns the end of --duration into success; Ctrl-C stays an interruption.
func endedByDuration(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return nil
	}
	return err
}

// endErr is how a stream ends with ctx: the end of --duration after a failed refresh is
// that failure (Redis still unreachable is no success); else ctx's error.
func endErr(ctx context.Context, lastErr error) error {
	if lastErr != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return lastErr
	}
	return ctx.Err()
}

// watchStream prints one line (or JSON object) per refresh until ctx ends or Count reads
// were attempted (a failed one fails the run); reads never overlap.
func watchStream(ctx context.Context, ios *IOStreams, opts *WatchOptions, cost float64, addr string, read tui.WatchSource) error {
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	timeout := tui.FetchTimeout(opts.Interval)
	var prev bucket.State
	var hasPrev, saidMissing bool
	var lastErr, failed error // the last read's failure; the last failure of any read
	printed := 0
	for n := 0; opts.Count == 0 || n < opts.Count; n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return endErr(ctx, lastErr)
			case <-tick.C:
			}
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		s, err := read(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return endErr(ctx, lastErr)
			}
			if rediserr.IsUnreachable(err) {
				err = &UnreachableError{Addr: addr, Err: err}
			}
			fmt.Fprintf(ios.ErrOut, "bucketctl: %s (retrying every %s)\n", opts.src.errText(err), opts.Interval)
			lastErr, failed = err, err
			continue
		}
		lastErr = nil
		if !s.Exists && s.Problem == "" && !saidMissing {
			fmt.Fprintf(ios.ErrOut, "bucketctl: %s: no such key (misspelt, or a bucket that expired full or was refilled by a reset that deletes; a missing bucket reads as full)\n", format.SafeKey(opts.Key))
		}
		saidMissing = !s.Exists
		var act *bucket.Activity
		if hasPrev {
			if a, ok := s.ActivitySince(prev); ok {
				act = &a
			}
		}
		switch opts.Output {
		case output.FormatJSON:
			err = output.WriteJSONLine(ios.Out, output.WatchOf(s, act, cost))
		case output.FormatYAML:
			if _, err = io.WriteString(ios.Out, "---\n"); err == nil {
				err = output.WriteData(ios.Out, output.FormatYAML, output.WatchOf(s, act, cost))
			}
		default:
			_, err = fmt.Fprintln(ios.Out, output.WatchLine(s, act, cost))
		}
		if err != nil {
			return err
		}
		prev, hasPrev = s, true
		printed++
	}
	if failed != nil {
		return fmt.Errorf("printed %d of %d records: %w", printed, opts.Count, failed)
	}
	return nil
}
