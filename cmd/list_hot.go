package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/cmd/output"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/bucket/rules"
	"github.com/bucketctl/bucketctl/tui/format"
)

// list --hot: the buckets being written now (bucket.HotBuckets), busiest first.

const (
	defaultHotFor   = 1500 * time.Millisecond
	defaultHotLimit = 20
	maxHotFor       = time.Hour
)

// HotView is one bucket of list --hot in JSON and YAML: the bucket as list shows it, and how
// busy it was. DecisionsPerSec comes from the native counters (RateFrom "counters", with
// DeniedPerSec) or from the writes seen (RateFrom "writes", DeniedPerSec null); RankedBy
// names what ranked the keys.
type HotView struct {
	output.StateView `yaml:",inline"`
	DecisionsPerSec  float64  `json:"decisions_per_sec" yaml:"decisions_per_sec"`
	DeniedPerSec     *float64 `json:"denied_per_sec" yaml:"denied_per_sec"`
	WritesSeen       int64    `json:"writes_seen" yaml:"writes_seen"`
	RateFrom         string   `json:"rate_from" yaml:"rate_from"`
	RankedBy         string   `json:"ranked_by" yaml:"ranked_by"`
	ObservedMS       float64  `json:"observed_ms" yaml:"observed_ms"`
}

func checkHotFlags(cmd *cobra.Command, opts *ListOptions) error {
	if !opts.Hot {
		if cmd.Flags().Changed("for") {
			return usagef("--for works with --hot only (bucketctl list --hot --for %s)", opts.For)
		}
		return nil
	}
	switch {
	case opts.All:
		return usagef("--all and --hot do not go together: --hot lists buckets only")
	case opts.For < 100*time.Millisecond || opts.For > maxHotFor:
		return usagef("--for %s: must be between 100ms and 1h", opts.For)
	}
	return nil
}

// globPrefix is the literal start of a Redis glob: every key it matches starts with it.
func globPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

func listHotRun(opts *ListOptions) error {
	sr, err := opts.states(&opts.Spec, opts.Output, output.StateFormats...)
	if err != nil {
		return err
	}
	f, ctx, node := opts.src, opts.Ctx, sr.node
	q := hot.Query{For: opts.For, Limit: opts.Limit, Resolve: sr.resolve,
		Options: hot.Options{Custom: sr.custom}}
	if q.Limit == 0 {
		q.Limit = 1000
	}
	if p := globPrefix(opts.Match); p != "" {
		q.Prefixes = []string{p}
	}
	prog := output.NewProgress(f.IO)
	prog.Show("following writes for %s (client tracking)...", format.Duration(opts.For))
	rep, err := hot.Buckets(ctx, sr.st, q)
	prog.Clear()
	if err != nil {
		return err
	}
	out := output.NewStream(f.IO, opts.Output, withNode(node, "KEY", "LAYOUT", "DECISIONS/s", "DENIED/s", "TOKENS", "CAPACITY", "FILL", "TTL")...)
	shown := 0
	for _, b := range rep.Buckets {
		if opts.Match != "*" && !rules.GlobMatch(opts.Match, b.State.Key) {
			continue
		}
		shown++
		if out.IsTable() {
			err = out.Add(nil, hotRow(b, node)...)
		} else {
			err = out.Add(hotView(b, rep, node))
		}
		if err != nil {
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	masters := format.Plural(rep.Masters, "master")
	fmt.Fprintf(f.IO.ErrOut, "hot: ranked by %s over %s on %s: %s written (%s), %s of the busiest not buckets (left out), %s\n",
		rep.Source, format.Duration(rep.Observed), masters, format.Plural(int(rep.Keys), "key"),
		format.Plural(int(rep.Messages), "invalidation message"), format.Count(rep.NotBuckets),
		format.Plural(shown, "bucket")+" listed")
	return nil
}

func hotRate(v float64) string { return format.PerSecond(v) }

func hotRow(b hot.Bucket, node func(string) string) []string {
	s := b.State
	rate, denied := hotRate(b.PerSecond), "-"
	if b.Counted {
		denied = hotRate(b.DeniedPerSecond)
	} else {
		rate += " (writes)"
	}
	tokens, capacity, fill := format.Tokens(s.Tokens), "?", "?"
	if s.HasSpec() {
		capacity, fill = format.Tokens(s.Spec.Capacity), format.Percent(s.Fill())
	} else {
		tokens += " (stored)"
	}
	ttl := format.TTL(s.TTL)
	if s.Exists && s.TTL == -1 {
		ttl = "none!"
	}
	cells := []string{safe(s.Key), layoutLabel(s), rate, denied, tokens, capacity, fill, ttl}
	if node != nil {
		cells = append(cells, node(s.Key))
	}
	return cells
}

func hotView(b hot.Bucket, rep hot.Report, node func(string) string) HotView {
	v := HotView{StateView: stateViewNode(b.State, node), DecisionsPerSec: format.JSONRate(b.PerSecond),
		WritesSeen: b.Writes, RateFrom: "writes", RankedBy: rep.Source, ObservedMS: format.JSONMS(rep.Observed)}
	if b.Counted {
		d := format.JSONRate(b.DeniedPerSecond)
		v.DeniedPerSec, v.RateFrom = &d, "counters"
	}
	return v
}
