package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// terminalLimit is the default --limit of list and inspect when stdout is a terminal: a
// person reads the first screens. Piped output is complete unless --limit says otherwise.
const terminalLimit = 1000

// addLimitFlag registers --limit; resolveLimit turns it into the limit in force.
func addLimitFlag(cmd *cobra.Command, p *int, what string) {
	cmd.Flags().IntVarP(p, "limit", "n", 0, fmt.Sprintf("stop after this many %s (0 = no limit; default: %d on a terminal, no limit when piped)", what, terminalLimit))
}

func resolveLimit(cmd *cobra.Command, io *IOStreams, v int) (int, error) {
	if v < 0 {
		return 0, usagef("--limit %d: must be >= 0 (0 = no limit)", v)
	}
	if !cmd.Flags().Changed("limit") && io.StdoutTTY {
		return terminalLimit, nil
	}
	return v, nil
}

// scanRun is a streaming scan as list, inspect --match and reset --match run it: pages of
// states handed on as they arrive, keys that are not buckets counted and left out (unless
// all), a limit on buckets, and progress on a terminal.
type scanRun struct {
	io    *IOStreams
	st    *bucket.Store
	opts  bucket.ScanOptions
	limit int
	all   bool
	// listsOthers is what lists the keys left out, for the note on them; "" for the
	// commands that have --all.
	listsOthers string

	truncated bool
	stats     bucket.ScanStats
}

func newScanRun(ctx context.Context, f *Factory, st *bucket.Store, match string, resolve bucket.Resolver) (*scanRun, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	return &scanRun{io: f.IO, st: st, opts: bucket.ScanOptions{Match: match, Resolve: resolve,
		Custom: cfg.CustomLayouts(), Count: 500, MaxCount: 8000}}, nil
}

// run scans and calls fn with each page's states (buckets only, unless all). The progress
// line is cleared before fn runs, so rows written to the same terminal stay clean.
func (r *scanRun) run(ctx context.Context, fn func([]bucket.State) error) error {
	sc, err := r.st.NewScanner(ctx, r.opts)
	if err != nil {
		return err
	}
	prog := newProgress(r.io)
	defer prog.clear()
	var dbsize int64
	if prog.enabled {
		dbsize, _ = sc.DBSize(ctx)
	}
	start, last := time.Now(), time.Time{}
	found := 0
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The next page is scanned and read while this one is written out.
	for p := range sc.Pages(ctx, 1) {
		r.stats = p.Stats
		if p.Err != nil {
			return p.Err
		}
		page := p.States
		keep := page[:0]
		for _, s := range page {
			if s.Problem != "" && !r.all {
				continue
			}
			if s.Problem == "" {
				if r.limit > 0 && found >= r.limit {
					r.truncated = true
					break
				}
				found++
			}
			keep = append(keep, s)
		}
		if len(keep) > 0 {
			prog.clear()
			if err := fn(keep); err != nil {
				return err
			}
		}
		if r.truncated {
			return nil
		}
		if time.Since(last) > 100*time.Millisecond {
			last = time.Now()
			prog.show("%s", scanProgress(r.stats, dbsize, time.Since(start)))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// scanProgress is the progress line: keys scanned (and share of DBSIZE), buckets, rate.
func scanProgress(s bucket.ScanStats, dbsize int64, took time.Duration) string {
	share := ""
	if dbsize > 0 {
		share = fmt.Sprintf(" of ~%s (%s)", format.Count(dbsize), format.Percent(min(1, float64(s.Keys)/float64(dbsize))))
	}
	rate := float64(s.Keys) / max(took.Seconds(), 1e-3)
	return fmt.Sprintf("scanned %s%s · %s · %s keys/s", plural64(s.Keys, "key"), share,
		plural64(s.Buckets, "bucket"), format.Count(int64(rate)))
}

// plural64 writes n (as a count) and what, with an s unless n is 1: "1 key", "2 keys".
func plural64(n int64, what string) string {
	s := format.Count(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
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
			plural64(r.stats.Other, "key"), safe(fmt.Sprintf("%q", match)), are, lists)
	}
	if r.stats.Buckets == 0 && (r.stats.Other == 0 || !r.all) {
		fmt.Fprintf(r.io.ErrOut, "no buckets match %s\n", safe(fmt.Sprintf("%q", match)))
	}
}

// listCommand is the list command that shows every key matching pattern, buckets or not,
// for commands without --all of their own. The pattern is quoted for a POSIX shell.
func listCommand(pattern string) string {
	return "bucketctl list --match '" + safe(strings.ReplaceAll(pattern, "'", `'\''`)) + "' --all"
}
