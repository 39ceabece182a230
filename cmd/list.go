package cmd

import (
	"fmt"
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
	All bool
	// Hot lists the buckets being written now instead (For: how long to observe).
	Hot bool
	For time.Duration
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
  bucketctl list --hot --for 10s --match 'rate:*' -o json
  bucketctl list --match 'rate:user:*' --limit 50
  bucketctl list --match 'rate:*' -o jsonl > buckets.jsonl
  bucketctl list --match 'wm:*' --layout webman --capacity 50 --rate 10 -o json
  bucketctl list --cluster 10.0.0.1:6379 --match 'rate:*' -o wide     # NODE: the master of each key`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkHotFlags(cmd, opts); err != nil {
				return err
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
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output, output.StateFormats...)
	return cmd
}

func listRun(opts *ListOptions) error {
	sr, err := opts.states(&opts.Spec, opts.Output)
	if err != nil {
		return err
	}
	node, run := sr.node, sr.scan(opts.Match, opts.Limit, opts.All)
	out := output.NewStream(opts.IO, opts.Output, output.WithNode(node, "KEY", "LAYOUT", "TOKENS", "CAPACITY", "RATE", "FILL", "FULL-IN", "TTL", "NOTE")...)
	noTTL := 0
	err = run.run(opts.Ctx, output.StateWriter(out, node, output.ListRow, func(s bucket.State) {
		if s.Exists && s.Problem == "" && s.TTL == -1 {
			noTTL++
		}
	}))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	run.notes(opts.Match)
	if noTTL > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "note: %s bucket(s) have no TTL (none!): they stay in memory until deleted\n", format.Count(int64(noTTL)))
	}
	return nil
}
