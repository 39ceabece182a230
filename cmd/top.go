package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui"
)

// TopOptions are the options of top.
type TopOptions struct {
	Match    string
	Interval time.Duration
	Duration time.Duration
	PageSize int
	Spec     SpecFlags
}

// NewCmdTop builds `top`.
func NewCmdTop(f *Factory, runF func(*TopOptions) error) *cobra.Command {
	opts := &TopOptions{}
	cmd := &cobra.Command{
		Use:   "top [--match PATTERN]",
		Short: "Live dashboard of many buckets: fill, tokens, rate, deny rate, TTL",
		Long: `A live dashboard of every bucket whose key matches --match, refreshed in the background:
one row per bucket with a fill bar, tokens, capacity, refill rate, allowed, denied and consumed
per second, and TTL, as the terminal's width allows. It shows the buckets that fit, hottest
first, and counts the rest.

Keys: ↑/↓ (j/k), pgup/pgdn, g/G move; s cycles the order, 1 by fill (emptiest first), 2 by
denials per second, 3 by name; / filters by part of the key (esc clears); enter opens the
bucket's detail (the watch view), esc goes back; r resets the selected bucket (deletes its
keys, so it reads as full) after a y/n confirmation; ? shows every key and the Redis cost of
a refresh; q quits.

Each refresh reads only: SCAN (COUNT --page-size) on every master, then TYPE, PTTL and the
fields of --page-size buckets per pipelined round trip. A refresh never starts while the last
one is in flight; when one takes longer than --interval the header says so. When Redis is
unreachable a banner names the address and the cause, the last data stays on screen, and
the dashboard recovers by itself.

top needs a terminal; for scripts use 'bucketctl list' or 'bucketctl watch KEY -o json'.`,
		Example: `  bucketctl top
  bucketctl top --match 'rate:user:*' --interval 2s
  bucketctl top --match 'ratelimit:*' --layout webman --capacity 50 --rate 10`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case opts.Interval < 50*time.Millisecond:
				return usagef("--interval %s: must be at least 50ms", opts.Interval)
			case opts.PageSize < 1:
				return usagef("--page-size %d: must be at least 1", opts.PageSize)
			case opts.Duration < 0:
				return usagef("--duration %s: must be >= 0 (0 = until stopped)", opts.Duration)
			}
			if runF != nil {
				return runF(opts)
			}
			return topRun(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Match, "match", "*", "Redis glob pattern of the keys to show (SCAN, never KEYS)")
	fl.DurationVarP(&opts.Interval, "interval", "i", time.Second, "time between refreshes")
	fl.DurationVar(&opts.Duration, "duration", 0, "quit after this long (0 = until q)")
	fl.IntVar(&opts.PageSize, "page-size", 1000, "SCAN COUNT, and buckets read per pipelined round trip")
	opts.Spec.register(cmd, f, false)
	return cmd
}

func topRun(cmd *cobra.Command, f *Factory, opts *TopOptions) error {
	if !f.IO.StdoutTTY {
		return usagef("top needs a terminal; for scripts use 'bucketctl list --match %s' or 'bucketctl watch KEY -o json'", opts.Match)
	}
	ctx, cancel := withDuration(cmd.Context(), opts.Duration)
	defer cancel()
	d, err := f.liveDeps(ctx, cmd, &opts.Spec)
	if err != nil {
		return err
	}
	return endedByDuration(ctx, RunTop(ctx, f.IO, d.store, TopParams{Match: opts.Match, Interval: opts.Interval,
		PageSize: opts.PageSize, Resolve: d.resolve, Suffixes: d.suffixes, Addr: d.addr}))
}

// TopParams say what RunTop shows. Zero values take the defaults.
type TopParams struct {
	// Match is the SCAN pattern (default "*").
	Match string
	// Interval is the time between refreshes (default 1 s).
	Interval time.Duration
	// PageSize is the SCAN COUNT and the buckets read per pipeline (default 1000).
	PageSize int
	// Resolve gives each key's layout and spec (nil: detect the layout, spec from the bucket).
	Resolve bucket.Resolver
	// Suffixes are the time-key suffixes of two-key layouts (default: the presets').
	Suffixes []string
	// Addr names the server in the banner when Redis is unreachable.
	Addr string
}

// RunTop runs the top dashboard full screen on ios over st until the user quits or ctx
// ends. The demo command opens it on its sandbox this way.
func RunTop(ctx context.Context, ios *IOStreams, st *bucket.Store, p TopParams) error {
	if p.Match == "" {
		p.Match = "*"
	}
	styles := tuiStyles(ios)
	src := NewTopSource(st, p)
	opts := tui.TopOptions{Match: p.Match, LiveOptions: tui.LiveOptions{Addr: p.Addr,
		Interval: p.Interval, Styles: &styles}}
	if p.Resolve != nil {
		opts.CostOf = func(key string) float64 { return p.Resolve(key).Cost }
	}
	m := tui.NewTop(src, opts)
	return runProgram(ctx, ios, m)
}

// tuiStyles are the live views' styles for ios: colours follow the terminal, none with
// NO_COLOR or --no-color.
func tuiStyles(ios *IOStreams) tui.Styles {
	r := lipgloss.NewRenderer(ios.Out)
	if ios.NoColor {
		r.SetColorProfile(termenv.Ascii)
	}
	return tui.NewStyles(r)
}

// TopSource is the Redis side of top: SCAN on every master, then pipelined reads of the
// matching buckets, PageSize per round trip, with the cost counted by a go-redis hook.
type TopSource struct {
	st       *bucket.Store
	match    string
	page     int
	resolve  bucket.Resolver
	suffixes []string
}

// NewTopSource returns the source of the top dashboard over st.
func NewTopSource(st *bucket.Store, p TopParams) *TopSource {
	if p.PageSize <= 0 {
		p.PageSize = 1000
	}
	if p.Match == "" {
		p.Match = "*"
	}
	countCost(st.Redis())
	return &TopSource{st: st, match: p.Match, page: p.PageSize, resolve: p.Resolve, suffixes: p.Suffixes}
}

// Fetch reads every matching bucket once.
func (s *TopSource) Fetch(ctx context.Context) (tui.TopSnapshot, error) {
	c := &costCounter{}
	ctx = withCostCounter(ctx, c)
	start := time.Now()
	var states, page []bucket.State
	var pending []string
	pipelines := 0
	inspect := func(keys []string) error {
		var err error
		if page, err = s.st.Inspect(ctx, keys, s.resolve); err != nil {
			return err
		}
		pipelines++
		states = append(states, page...)
		return nil
	}
	err := s.st.Scan(ctx, s.match, int64(s.page), s.suffixes, func(keys []string) error {
		pending = append(pending, keys...)
		for len(pending) >= s.page {
			if err := inspect(pending[:s.page]); err != nil {
				return err
			}
			pending = pending[s.page:]
		}
		return nil
	})
	if err == nil && len(pending) > 0 {
		err = inspect(pending)
	}
	if err != nil {
		return tui.TopSnapshot{}, err
	}
	cost := c.cost()
	cost.Detail = fmt.Sprintf("%s, %s of up to %d buckets", tui.Plural(int(c.scans.Load()), "SCAN page"),
		tui.Plural(pipelines, "read pipeline"), s.page)
	return tui.TopSnapshot{States: states, Cost: cost, Took: time.Since(start)}, nil
}

// Reset refills the bucket the way 'bucketctl reset' does by default: it deletes the
// bucket's keys, and every layout reads a missing bucket as full.
func (s *TopSource) Reset(ctx context.Context, b bucket.State) error {
	if b.Problem != "" {
		return fmt.Errorf("%s %s: left untouched", b.Key, b.Problem)
	}
	_, err := s.st.Reset(ctx, b.Key, b.Layout, b.Spec, bucket.ResetTo{Delete: true})
	return err
}
