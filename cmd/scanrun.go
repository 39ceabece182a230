package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// terminalLimit is list's and inspect's --limit on a terminal; piped output is complete.
const terminalLimit = 1000

// addLimitFlag registers --limit; resolveLimit turns it into the limit in force.
func addLimitFlag(cmd *cobra.Command, p *int, what string) {
	intVarP(cmd.Flags(), p, "limit", "n", 0, fmt.Sprintf("stop after this many %s (0 = no limit; default: %d on a terminal, no limit when piped)", what, terminalLimit))
}

// keysOrMatch is the rule of inspect and reset: KEY... or --match, and --limit only with
// --match.
func keysOrMatch(cmd *cobra.Command, args []string, match string) error {
	switch {
	case len(args) == 0 && match == "":
		return usagef("%s needs KEY... or --match PATTERN (see '%s --help')", cmd.Name(), cmd.CommandPath())
	case len(args) > 0 && match != "":
		return usagef("give keys or --match, not both")
	case len(args) > 0 && cmd.Flags().Changed("limit"):
		return usagef("--limit applies to --match only: %s takes every key given", cmd.Name())
	}
	return nil
}

func resolveLimit(cmd *cobra.Command, io *IOStreams, v int) (int, error) {
	if err := notNegative("--limit", v, "no limit"); err != nil {
		return 0, err
	}
	if !cmd.Flags().Changed("limit") && io.StdoutTTY {
		return terminalLimit, nil
	}
	return v, nil
}

// scanRun is a streaming scan of list, inspect --match and reset --match: pages of
// states, keys that are not buckets left out unless all, progress on a terminal.
type scanRun struct {
	io    *IOStreams
	st    *bucket.Store
	opts  scan.Options
	limit int
	all   bool
	// listsOthers names what lists the keys left out ("": --all).
	listsOthers string

	truncated bool
	stats     scan.Stats
}

// reading is what a command that reads buckets sets up: flags and rules resolved first
// (bad ones never dial Redis), then the Store and the server; node when output shows it.
type reading struct {
	io      *IOStreams
	resolve bucket.Resolver
	st      *bucket.Store
	conn    *connect.Server
	custom  []bucket.Layout
	node    func(string) string
}

// states is reading for a command that prints states in format: every format but the
// plain table names each key's node.
func (e Env) states(spec *SpecFlags, format string) (*reading, error) {
	r, err := e.reading(spec)
	if err == nil && format != output.FormatTable {
		r.node, err = e.src.nodeOf(e.Ctx)
	}
	return r, err
}

func (e Env) reading(spec *SpecFlags) (*reading, error) {
	resolve, err := e.src.resolver(spec)
	if err != nil {
		return nil, err
	}
	st, err := e.src.Store(e.Ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := e.src.Config()
	if err != nil {
		return nil, err
	}
	conn, err := e.src.Conn()
	return &reading{io: e.IO, resolve: resolve, st: st, conn: conn, custom: cfg.CustomLayouts()}, err
}

func (r *reading) scan(match string, limit int, all bool) *scanRun {
	return &scanRun{io: r.io, st: r.st, limit: limit, all: all, opts: scan.Options{Match: match, Resolve: r.resolve,
		Custom: r.custom, Count: 500, MaxCount: 8000}}
}

// run calls fn with each page's states, the progress line cleared first.
func (r *scanRun) run(ctx context.Context, fn func([]bucket.State) error) error {
	prog := output.NewProgress(r.io)
	defer prog.Clear()
	start, last := time.Now(), time.Time{}
	o := r.opts
	o.BucketsOnly, o.Limit, o.CountKeys = !r.all, int64(r.limit), prog.Enabled
	o.OnPage = func(s scan.Stats) {
		r.stats = s
		if time.Since(last) <= 100*time.Millisecond {
			return
		}
		last = time.Now()
		share := ""
		if s.DBSize > 0 {
			share = fmt.Sprintf(" of ~%s (%s)", format.Count(s.DBSize), format.Percent(min(1, float64(s.Keys)/float64(s.DBSize))))
		}
		rate := float64(s.Keys) / max(time.Since(start).Seconds(), 1e-3)
		prog.Show("scanned %s%s · %s · %s keys/s", format.Plural(s.Keys, "key"), share, format.Plural(s.Buckets, "bucket"), format.Count(int64(rate)))
	}
	stats, err := scan.States(ctx, r.st, o, func(page []bucket.State) error {
		prog.Clear()
		return fn(page)
	})
	r.stats, r.truncated = stats, stats.Truncated
	return err
}

// notes reports on stderr what the scan left out or cut, after the output.
func (r *scanRun) notes(match string) {
	if r.truncated {
		fmt.Fprintf(r.io.ErrOut, "note: stopped at --limit %d buckets; narrow --match or raise --limit (0 = no limit)\n", r.limit)
	}
	if r.stats.Other > 0 && !r.all {
		lists := r.listsOthers
		if lists == "" {
			lists = "--all"
		}
		are := "are not buckets and were"
		if r.stats.Other == 1 {
			are = "is not a bucket and was"
		}
		fmt.Fprintf(r.io.ErrOut, "note: %s matching %s %s left out (%s lists them)\n",
			format.Plural(r.stats.Other, "key"), safe(fmt.Sprintf("%q", match)), are, lists)
	}
	if r.stats.Buckets == 0 && (r.stats.Other == 0 || !r.all) {
		fmt.Fprintf(r.io.ErrOut, "no buckets match %s\n", safe(fmt.Sprintf("%q", match)))
	}
}

// listCommand is the list command that shows every key matching pattern, buckets or not.
func listCommand(pattern string) string {
	return "bucketctl list --match " + shellWord(pattern) + " --all"
}
