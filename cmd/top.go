package cmd

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/tui"
	"github.com/bucketctl/bucketctl/tui/format"
)

type TopOptions struct {
	Env
	TopParams
	Duration time.Duration
	Spec     SpecFlags
}

func NewCmdTop(f *Factory, runF func(*TopOptions) error) *cobra.Command {
	opts := &TopOptions{}
	cmd := &cobra.Command{
		Use:   "top [--match PATTERN]",
		Short: "Live dashboard of many buckets: fill, tokens, rate, deny rate, TTL",
		Long:  commandHelp("top"),
		Example: `  bucketctl top
  bucketctl top --match 'api:user:*' --interval 2s
  bucketctl top --match 'wm:*' --layout webman --capacity 50 --rate 10`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := firstErr(atLeast("--interval", opts.Interval, 50*time.Millisecond), atLeast("--page-size", opts.PageSize, 1),
				notNegative("--limit", opts.Limit, "no limit"), notNegative("--duration", opts.Duration, "until stopped")); err != nil {
				return err
			}
			if opts.Budget < 100 {
				return usagef("--budget %d: must be at least 100 commands per second", opts.Budget)
			}
			return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, topRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Match, "match", topDefaults.Match, "Redis glob pattern of the keys to show (SCAN, never KEYS)")
	durationVarP(fl, &opts.Interval, "interval", "i", topDefaults.Interval, "time between refreshes")
	durationVarP(fl, &opts.Duration, "duration", "", 0, "quit after this long (0 = until q)")
	intVar(fl, &opts.PageSize, "page-size", topDefaults.PageSize, "SCAN COUNT, and buckets read per pipelined round trip")
	intVar(fl, &opts.Budget, "budget", topDefaults.Budget, "the most Redis commands per second top may send")
	intVarP(fl, &opts.Limit, "limit", "n", 0, "look at the first N buckets found only, then start over (0 = no limit)")
	opts.Spec.register(cmd, f, false)
	return cmd
}

func topRun(opts *TopOptions) error {
	if !opts.IO.StdoutTTY {
		return usagef("top needs a terminal; for scripts use 'bucketctl list --match %s' or 'bucketctl watch KEY -o json'", opts.Match)
	}
	ctx, cancel := withDuration(opts.Ctx, opts.Duration)
	defer cancel()
	opts.Ctx = ctx
	rd, err := opts.reading(&opts.Spec)
	if err != nil {
		return err
	}
	p := opts.TopParams
	p.Resolve, p.Custom, p.NodeClient = rd.resolve, rd.custom, rd.conn.NodeClient
	p.Addr, p.Server, p.ErrText = rd.conn.Addr(), rd.conn.Label(), opts.src.errText
	return endedByDuration(ctx, RunTop(ctx, opts.IO, rd.st, p))
}

// TopParams say what RunTop shows: top fills them from its flags, demo for its sandbox.
type TopParams struct {
	Match    string
	Interval time.Duration
	PageSize int // SCAN COUNT and buckets per pipeline
	Budget   int // the most Redis commands per second
	Limit    int // above 0: each pass looks at the first Limit buckets only

	Resolve    bucket.Resolver // nil: layouts detected, specs read from the buckets
	Custom     []bucket.Layout
	NodeClient hot.NodeClient
	Addr       string // named in the banner when Redis is unreachable
	Server     string // named in the header (default Addr)
	Sort       tui.SortBy
	Hint       string // a line under the header
	ErrText    func(error) string
}

// topDefaults are top's flag defaults; a zero Match, Interval or Budget takes its default
// (a zero PageSize takes the scan's). The budget is about 4% of one core.
var topDefaults = TopParams{Match: "*", Interval: time.Second, PageSize: 200, Budget: 10000}

func (p TopParams) withDefaults() TopParams {
	p.Match = cmp.Or(p.Match, topDefaults.Match)
	p.Interval = cmp.Or(p.Interval, topDefaults.Interval)
	p.Budget = cmp.Or(p.Budget, topDefaults.Budget)
	if p.ErrText == nil {
		p.ErrText = (*Factory)(nil).errText // secrets found by their form hidden
	}
	return p
}

// RunTop runs the top dashboard full screen over st until the user quits or ctx ends.
func RunTop(ctx context.Context, ios *IOStreams, st *bucket.Store, p TopParams) error {
	p = p.withDefaults()
	styles := tuiStyles(ios)
	src := NewTopSource(st, p)
	defer src.Close()
	opts := tui.TopOptions{Match: p.Match, Sort: p.Sort, Hint: p.Hint, LiveOptions: tui.LiveOptions{Addr: p.Addr,
		Server: p.Server, Interval: p.Interval, Styles: &styles, ErrText: p.ErrText}}
	if p.Resolve != nil {
		opts.CostOf = func(key string) float64 { return p.Resolve(key).Cost }
	}
	return runProgram(ctx, ios, tui.NewTop(src, opts))
}

// tuiStyles are the live views' styles: the terminal's colours, none with --no-color.
func tuiStyles(ios *IOStreams) tui.Styles {
	if ios.NoColor {
		return tui.NewStyles(termenv.Ascii)
	}
	return tui.NewStyles(lipgloss.NewRenderer(ios.Out).ColorProfile())
}

// TopSource is the Redis side of top: a budgeted scan.Live view, busiest buckets first. Its
// Keep keeps the bucket under the cursor in every snapshot while it exists.
type TopSource struct {
	*scan.Live
	st   *bucket.Store
	addr string // for a refused reset's message
}

// NewTopSource returns top's source over st.
func NewTopSource(st *bucket.Store, p TopParams) *TopSource {
	p = p.withDefaults()
	return &TopSource{st: st, addr: p.Addr, Live: scan.NewLive(st, scan.WatchOptions{PerSecond: int64(p.Budget), Interval: p.Interval,
		Limit: int64(p.Limit), NodeClient: p.NodeClient,
		Options: scan.Options{Match: p.Match, Count: int64(p.PageSize), Resolve: p.Resolve, Custom: p.Custom}})}
}

// Fetch runs one refresh within the budget.
func (s *TopSource) Fetch(ctx context.Context) (tui.TopSnapshot, error) {
	r, err := s.Refresh(ctx)
	if err != nil {
		return tui.TopSnapshot{}, err
	}
	res := r.Watch
	cover := "scanned " + format.Plural(res.Scanned, "key")
	if res.DBSize > 0 {
		cover = fmt.Sprintf("scanned %s of ~%s", format.Count(res.Scanned), format.Plural(res.DBSize, "key"))
	}
	if res.Passes > 0 {
		cover += fmt.Sprintf(" (pass %d)", res.Passes+1)
	}
	spent := tui.Cost{Commands: int(res.Commands), RoundTrips: int(res.RoundTrips),
		Detail: fmt.Sprintf("%s; %s, %s kept", cover, format.Plural(int(res.Pages), "SCAN page"), format.Plural(len(res.States), "bucket"))}
	snap := tui.TopSnapshot{States: res.States, Cost: spent, Took: r.Took, Coverage: cover,
		Keyspace: max(0, res.DBSize), Hot: r.Hot, HotSource: "client tracking", HotNote: r.HotNote}
	if res.Whole {
		snap.Coverage = "" // the rows are every bucket there is
	}
	return snap, nil
}

// Reset refills the bucket by deleting its keys, as 'bucketctl reset' does by default.
func (s *TopSource) Reset(ctx context.Context, b bucket.State) error {
	_, err := s.st.ResetState(ctx, b, bucket.ResetTo{Delete: true})
	if !hasReply(err) {
		return err
	}
	return newWriteError("reset "+format.QuoteKey(b.Key), s.addr, "", err)
}
