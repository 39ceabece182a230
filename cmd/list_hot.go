package cmd

import (
	"fmt"
	"time"

	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/bucket/rules"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

const (
	defaultHotFor   = 1500 * time.Millisecond
	defaultHotLimit = 20
	maxHotFor       = time.Hour
)

// listHotRun lists the buckets being written now, busiest first.
func listHotRun(opts *ListOptions) error {
	sr, err := opts.states(&opts.Spec, opts.Output)
	if err != nil {
		return err
	}
	f, ctx, node := opts.src, opts.Ctx, sr.node
	q := hot.Query{For: opts.For, Limit: opts.Limit, Resolve: sr.resolve,
		Options: hot.Options{Custom: sr.custom, NodeClient: sr.conn.NodeClient}}
	if q.Limit == 0 {
		q.Limit = 1000
	}
	if p := rules.GlobPrefix(opts.Match); p != "" {
		q.Prefixes = []string{p}
	}
	prog := output.NewProgress(f.IO)
	prog.Show("following writes for %s (client tracking)...", format.Duration(opts.For))
	rep, err := hot.Buckets(ctx, sr.st, q)
	prog.Clear()
	if err != nil {
		return err
	}
	out := output.NewStream(f.IO, opts.Output, output.WithNode(node, "KEY", "LAYOUT", "DECISIONS/s", "DENIED/s", "TOKENS", "CAPACITY", "FILL", "TTL")...)
	shown := 0
	for _, b := range rep.Buckets {
		if opts.Match != "*" && !rules.GlobMatch(opts.Match, b.State.Key) {
			continue
		}
		shown++
		if out.IsTable() {
			err = out.Add(nil, output.HotRow(b, node)...)
		} else {
			err = out.Add(output.HotOf(b, rep, node))
		}
		if err != nil {
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "hot: ranked by %s over %s on %s: %s written (%s), %s of the busiest not buckets (left out), %s\n",
		rep.Source, format.Duration(rep.Observed), format.Plural(rep.Masters, "master"), format.Plural(int(rep.Keys), "key"),
		format.Plural(int(rep.Messages), "invalidation message"), format.Count(rep.NotBuckets),
		format.Plural(shown, "bucket")+" listed")
	return nil
}
