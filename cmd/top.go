package cmd

import (
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

// TopOptions are the options of top.
type TopOptions struct {
	Env
	Match    string
	Interval time.Duration
	Duration time.Duration
	PageSize int
	Budget   int
	Limit    int
	Spec     SpecFlags
}

// NewCmdTop builds `top`.
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
	fl.StringVar(&opts.Match, "match", "*", "Redis glob pattern of the keys to show (SCAN, never KEYS)")
	durationVarP(fl, &opts.Interval, "interval", "i", time.Second, "time between refreshes")
	durationVarP(fl, &opts.Duration, "duration", "", 0, "quit after this long (0 = until q)")
	intVar(fl, &opts.PageSize, "page-size", 200, "SCAN COUNT, and buckets read per pipelined round trip")
	intVar(fl, &opts.Budget, "budget", defaultTopBudget, "the most Redis commands per second top may send")
	intVarP(fl, &opts.Limit, "limit", "n", 0, "look at the first N buckets found only, then start over (0 = no limit)")
	opts.Spec.register(cmd, f, false)
	return cmd
}

func topRun(opts *TopOptions) error {
	f := opts.src
	if !opts.IO.StdoutTTY {
		return usagef("top needs a terminal; for scripts use 'bucketctl list --match %s' or 'bucketctl watch KEY -o json'", opts.Match)
	}
	ctx, cancel := withDuration(opts.Ctx, opts.Duration)
	defer cancel()
	d, err := f.liveDeps(ctx, &opts.Spec)
	if err != nil {
		return err
	}
	return endedByDuration(ctx, RunTop(ctx, opts.IO, d.store, TopParams{Match: opts.Match, Interval: opts.Interval,
		PageSize: opts.PageSize, Budget: opts.Budget, Limit: opts.Limit, Resolve: d.resolve, Custom: d.custom, Addr: d.addr, Server: d.server,
		NodeClient: d.nodeClient, ErrText: f.errText}))
}

// TopParams say what RunTop shows. Zero values take the defaults.
type TopParams struct {
	// Match is the SCAN pattern (default "*").
	Match string
	// Interval is the time between refreshes (default 1 s).
	Interval time.Duration
	// PageSize is the SCAN COUNT and the buckets read per pipeline (default 200).
	PageSize int
	// Budget is the most Redis commands per second (default 10,000).
	Budget int
	// Limit, when above 0, makes each pass look at the first Limit buckets found only.
	Limit int
	// Resolve gives each key's layout and spec (nil: detect the layout, spec from the bucket).
	Resolve bucket.Resolver
	// Custom are the config file's layouts (their two-key buckets are found too).
	Custom []bucket.Layout
	// NodeClient builds the clients that follow writes (hot.Options.NodeClient).
	NodeClient hot.NodeClient
	// Addr names the server in the banner when Redis is unreachable.
	Addr string
	// Server names the server (and context) in the header (default: Addr).
	Server string
	// Sort is the order the dashboard opens in; Hint a line under its header.
	Sort tui.SortBy
	Hint string
	// ErrText is how an error shows (default: with the secrets found by their form hidden;
	// a command gives its Factory's errText, which knows this invocation's secrets).
	ErrText func(error) string
}

// RunTop runs the top dashboard full screen on ios over st until the user quits or ctx
// ends. The demo command opens it on its sandbox this way.
func RunTop(ctx context.Context, ios *IOStreams, st *bucket.Store, p TopParams) error {
	if p.Match == "" {
		p.Match = "*"
	}
	styles := tuiStyles(ios)
	src := NewTopSource(st, p)
	if p.ErrText == nil {
		p.ErrText = (*Factory)(nil).errText
	}
	opts := tui.TopOptions{Match: p.Match, Sort: p.Sort, Hint: p.Hint, LiveOptions: tui.LiveOptions{Addr: p.Addr,
		Server: p.Server, Interval: p.Interval, Styles: &styles, ErrText: p.ErrText}}
	if p.Resolve != nil {
		opts.CostOf = func(key string) float64 { return p.Resolve(key).Cost }
	}
	m := tui.NewTop(src, opts)
	defer src.Close()
	return runProgram(ctx, ios, m)
}

// tuiStyles are the live views' styles for ios: colours follow the terminal, none with
// NO_COLOR or --no-color.
func tuiStyles(ios *IOStreams) tui.Styles {
	if ios.NoColor {
		return tui.NewStyles(termenv.Ascii)
	}
	return tui.NewStyles(lipgloss.NewRenderer(ios.Out).ColorProfile())
}

// TopSource is the Redis side of top: a scan.Live view (the bucket/scan package's
// budgeted Watchlist, with the buckets written now first) that the dashboard draws.
type TopSource struct {
	st   *bucket.Store
	live *scan.Live
	addr string // the server, for a refused reset's message
}

// NewTopSource returns the source of the top dashboard over st.
func NewTopSource(st *bucket.Store, p TopParams) *TopSource {
	if p.Match == "" {
		p.Match = "*"
	}
	if p.Interval <= 0 {
		p.Interval = time.Second
	}
	if p.Budget <= 0 {
		p.Budget = defaultTopBudget
	}
	return &TopSource{st: st, addr: p.Addr, live: scan.NewLive(st, scan.WatchOptions{PerSecond: int64(p.Budget), Interval: p.Interval, Limit: int64(p.Limit), NodeClient: p.NodeClient,
		Options: scan.Options{Match: p.Match, Count: int64(p.PageSize), Resolve: p.Resolve, Custom: p.Custom}})}
}

// Close ends following writes.
func (s *TopSource) Close() { s.live.Close() }

// Keep keeps the bucket under the cursor in every snapshot while it exists.
func (s *TopSource) Keep(key string) { s.live.Keep(key) }

// defaultTopBudget is top's default Redis budget, in commands per second: about 4% of one
// core of a Redis server, so other clients barely notice (see scripts/bench/scale.sh).
const defaultTopBudget = 10000

// Fetch runs one refresh within the budget.
func (s *TopSource) Fetch(ctx context.Context) (tui.TopSnapshot, error) {
	r, err := s.live.Refresh(ctx)
	if err != nil {
		return tui.TopSnapshot{}, err
	}
	res := r.Watch
	spent := tui.Cost{Commands: int(res.Commands), RoundTrips: int(res.RoundTrips)}
	cover := "scanned " + format.Plural(res.Scanned, "key")
	if res.DBSize > 0 {
		cover = fmt.Sprintf("scanned %s of ~%s", format.Count(res.Scanned), format.Plural(res.DBSize, "key"))
	}
	if res.Passes > 0 {
		cover += fmt.Sprintf(" (pass %d)", res.Passes+1)
	}
	spent.Detail = fmt.Sprintf("%s; %s, %s kept", cover, format.Plural(int(res.Pages), "SCAN page"), format.Plural(len(res.States), "bucket"))
	snap := tui.TopSnapshot{States: res.States, Cost: spent, Took: r.Took, Coverage: cover,
		Keyspace: max(0, res.DBSize), Hot: r.Hot, HotSource: "client tracking", HotNote: r.HotNote}
	if res.Whole {
		snap.Coverage = "" // the rows are every bucket there is
	}
	return snap, nil
}

// Reset refills the bucket the way 'bucketctl reset' does by default: it deletes the
// bucket's keys, and every layout reads a missing bucket as full. What may be reset is
// bucket.State.ResetOp's rule, as for reset (a key that is not a bucket, or a guess, is
// refused before anything is sent).
func (s *TopSource) Reset(ctx context.Context, b bucket.State) error {
	_, err := s.st.ResetState(ctx, b, bucket.ResetTo{Delete: true})
	if !hasReply(err) {
		return err
	}
	// The server answered with an error (NOREPLICAS, READONLY, OOM): said as reset says it.
	return newWriteError("reset "+format.QuoteKey(b.Key), s.addr, "", err)
}
