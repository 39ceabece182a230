package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// ListOptions are the options of list.
type ListOptions struct {
	Env
	Selection
	All     bool
	Hot     bool          // list the buckets being written now instead
	For     time.Duration // with Hot: how long to observe
	SortBy  string        // one of listOrders, "" for SCAN order
	Reverse bool
}

// NewCmdList builds `list`.
func NewCmdList(f *Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	cmd := &cobra.Command{
		Use:   "list [--match PATTERN]",
		Short: "List buckets matching a pattern: layout, tokens, fill, time to full, TTL",
		Long:  commandHelp("list"),
		Example: `  bucketctl list
  bucketctl list --hot                       # the buckets being hammered now
  bucketctl list --hot --for 10s --match 'api:*' -o json
  bucketctl list --match 'api:user:*' --limit 50
  bucketctl list --match 'api:user:*' --sort-by fill --limit 10   # the ten emptiest
  bucketctl list --sort-by ttl -r -o json
  bucketctl list --match 'api:*' -o jsonl > buckets.jsonl
  bucketctl list --match 'wm:*' --layout webman --capacity 50 --rate 10 -o json
  bucketctl list --cluster 10.0.0.1:6379 --match 'api:*' -o wide     # NODE: the master of each key`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case !opts.Hot && cmd.Flags().Changed("for"):
				return usagef("--for works with --hot only (bucketctl list --hot --for %s)", opts.For)
			case opts.Hot && opts.All:
				return usagef("--all and --hot do not go together: --hot lists buckets only")
			case opts.Hot && (opts.For < 100*time.Millisecond || opts.For > maxHotFor):
				return usagef("--for %s: must be between 100ms and 1h", opts.For)
			case opts.Hot && opts.SortBy != "":
				return usagef("--sort-by and --hot do not go together: --hot lists the busiest first")
			case opts.Reverse && opts.SortBy == "":
				return usagef("--reverse needs --sort-by (%s): without it rows come in SCAN order", strings.Join(listOrders, "|"))
			}
			limit, err := resolveLimit(cmd, f.IO, opts.Limit)
			if err != nil {
				return err
			}
			opts.Limit = limit
			if opts.Hot && !cmd.Flags().Changed("limit") {
				opts.Limit = defaultHotLimit
			}
			run := listRun
			if opts.Hot {
				run = listHotRun
			}
			return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Match, "match", "*", "Redis glob pattern of the keys to list")
	addLimitFlag(cmd, &opts.Limit, "buckets")
	cmd.Flags().BoolVar(&opts.All, "all", false, "list keys that are not buckets too (with a dash)")
	cmd.Flags().BoolVar(&opts.Hot, "hot", false, "list the buckets being written now, busiest first (client tracking, Redis 6+)")
	cmd.Flags().DurationVar(&opts.For, "for", defaultHotFor, "with --hot: how long to observe")
	cmd.Flags().Var(oneOf(&opts.SortBy, listOrders), "sort-by", "order rows by "+strings.Join(listOrders, "|")+
		" (holds the rows: the first --limit, else at most 100,000); without it rows stream in SCAN order")
	cmd.Flags().BoolVarP(&opts.Reverse, "reverse", "r", false, "with --sort-by: the reverse order")
	_ = cmd.RegisterFlagCompletionFunc("sort-by", fixedCompletions(listOrders...))
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output, output.StateFormats...)
	return cmd
}

func listRun(opts *ListOptions) error {
	sr, err := opts.states(&opts.Spec, opts.Output)
	if err != nil {
		return err
	}
	limit := opts.Limit
	if opts.SortBy != "" {
		limit = 0 // sortedRows keeps the first --limit
	}
	node, run := sr.node, sr.scan(opts.Match, limit, opts.All)
	out := output.NewStream(opts.IO, opts.Output, output.WithNode(node, "KEY", "LAYOUT", "TOKENS", "CAPACITY", "RATE", "FILL", "FULL-IN", "TTL", "NOTE")...)
	noTTL := 0
	write := output.StateWriter(out, node, output.ListRow, func(s bucket.State) {
		if s.Exists && s.Problem == "" && s.TTL == -1 {
			noTTL++
		}
	}, nil)
	fn, held := write, (*sortedRows)(nil)
	refused := usagef("list --sort-by: more than %s buckets match, and sorting holds them all in memory: give --limit N (the first N in this order) or a narrower --match",
		format.Count(int64(maxSorted)))
	if opts.SortBy != "" {
		held = &sortedRows{cmp: listLess(opts.SortBy, opts.Reverse), limit: opts.Limit}
		fn = func(page []bucket.State) error {
			if !held.add(page) {
				return refused
			}
			return nil
		}
	}
	if err = run.run(opts.Ctx, fn); err == refused {
		return err // nothing printed, not even an empty array
	}
	if err == nil && held != nil {
		err = write(held.sorted())
	}
	if err := out.End(err); err != nil {
		return err
	}
	run.notes(opts.Match)
	if held != nil && held.seen > len(held.rows) {
		fmt.Fprintf(opts.IO.ErrOut, "note: the first %s of %s buckets by %s (--limit)\n", format.Count(int64(len(held.rows))), format.Count(int64(held.seen)), opts.SortBy)
	}
	if noTTL > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "note: %s bucket(s) have no TTL (none!): they stay in memory until deleted\n", format.Count(int64(noTTL)))
	}
	return nil
}
