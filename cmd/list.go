package cmd

import (
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
)

// ListOptions are the options of list.
type ListOptions struct {
	Match  string
	Limit  int
	Spec   SpecFlags
	Output string
}

var errLimit = errors.New("limit reached")

// NewCmdList builds `list`.
func NewCmdList(f *Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--match PATTERN]",
		Short: "List buckets matching a pattern: layout, tokens, fill, time to full, TTL",
		Long: `List the buckets whose keys match --match (a Redis glob), on every master, with SCAN (never
KEYS): one SCAN page and one pipelined read per 500 keys. The time key of a two-key layout
(KEY:last_time) is shown as its bucket KEY. Buckets without a TTL are flagged: they stay in
memory forever unless their application deletes them.

Keys that are not buckets are listed with a dash and reported on stderr (exit 1).`,
		Example: `  bucketctl list
  bucketctl list --match 'rate:user:*' --limit 50
  bucketctl list --match 'ratelimit:*' --layout webman --capacity 50 --rate 10 -o json
  bucketctl list --cluster 10.0.0.1:6379 --match 'rate:*' -o wide     # NODE: the master of each key`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Limit < 0 {
				return usagef("--limit %d: must be >= 0 (0 = no limit)", opts.Limit)
			}
			if runF != nil {
				return runF(opts)
			}
			return listRun(cmd, f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Match, "match", "*", "Redis glob pattern of the keys to list")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 1000, "stop after this many buckets (0 = no limit)")
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output, stateFormats...)
	return cmd
}

func listRun(cmd *cobra.Command, f *Factory, opts *ListOptions) error {
	if err := checkFormat(opts.Output, stateFormats...); err != nil {
		return err
	}
	resolve, err := f.resolver(cmd, &opts.Spec)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var states []bucket.State
	truncated := false
	err = scanStates(ctx, f, st, opts.Match, resolve, func(page []bucket.State) error {
		for _, s := range page {
			if opts.Limit > 0 && len(states) >= opts.Limit {
				truncated = true
				return errLimit
			}
			states = append(states, s)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errLimit) {
		return err
	}
	sort.Slice(states, func(i, j int) bool { return states[i].Key < states[j].Key })
	node, err := stateNodes(ctx, f, opts.Output)
	if err != nil {
		return err
	}
	if isData(opts.Output) {
		err = writeData(f.IO.Out, opts.Output, stateViews(states, node))
	} else {
		err = printList(f, states, node)
	}
	if err != nil {
		return err
	}
	if truncated {
		fmt.Fprintf(f.IO.ErrOut, "note: stopped at --limit %d buckets; narrow --match or raise --limit\n", opts.Limit)
	}
	if len(states) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "no keys match %q\n", opts.Match)
	}
	return problemsErr(f, states)
}

// printList prints the list table, with a NODE column when node is not nil (-o wide).
func printList(f *Factory, states []bucket.State, node func(string) string) error {
	t := newTable(f.IO, "KEY", "LAYOUT", "TOKENS", "CAPACITY", "FILL", "FULL-IN", "TTL")
	t.node = node
	noTTL := 0
	for _, s := range states {
		if s.Problem != "" {
			t.add(s.Key, "-", "-", "-", "-", "-", fmtTTL(s.TTL))
			continue
		}
		layout := layoutLabel(s)
		tokens, capacity, fill, full := fmtNum(s.Tokens), "?", "?", "?"
		if s.HasSpec() {
			capacity, fill, full = fmtNum(s.Spec.Capacity), fmt.Sprintf("%.0f%%", s.Fill()*100), fmtDur(s.TimeToFull())
		} else {
			tokens += " (stored)"
		}
		ttl := fmtTTL(s.TTL)
		if s.Exists && s.TTL == -1 {
			ttl, noTTL = "none!", noTTL+1
		}
		t.add(s.Key, layout, tokens, capacity, fill, full, ttl)
	}
	if err := t.render(); err != nil {
		return err
	}
	if noTTL > 0 {
		fmt.Fprintf(f.IO.ErrOut, "note: %d bucket(s) have no TTL (none!): they stay in memory until deleted\n", noTTL)
	}
	return nil
}
