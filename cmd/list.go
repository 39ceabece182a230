package cmd

import (
	"fmt"
	"github.com/bucketctl/bucketctl/cmd/output"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// ListOptions are the options of list.
type ListOptions struct {
	Env
	Match  string
	Limit  int
	All    bool
	Spec   SpecFlags
	Output string
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
		Long: `List the buckets whose keys match --match (a Redis glob), on every master, with SCAN (never
KEYS). Rows stream as pages arrive, in SCAN order (pipe through sort for another order);
memory holds one page whatever the keyspace.

Redis cost: per page of about 500 keys, one SCAN and one pipelined round trip with one
read command per key (EVALSHA_RO of a read-only script) plus TIME. A hash with more fields
than any bucket, or a string longer than a number, is answered with its size alone.

Only buckets are listed: keys that are not (sessions, counters, queues, hashes of other
fields) are counted and left out; --all lists them too, with a dash. A two-key bucket's time
key (KEY:last_time) is part of its bucket KEY, never a row of its own. Buckets without a TTL
are flagged: they stay in memory forever unless their application deletes them. NOTE says
when a bucket's stored time is ahead of the server's (a client whose clock runs fast wrote
it) and, with --all, why a key is not a bucket.

On a terminal, --limit defaults to 1000 and progress shows on stderr; piped output is
complete unless --limit says otherwise. -o json streams one array, -o jsonl one object per
line.

--hot lists the buckets being written now instead, busiest first: decisions per second
(from the native counters, with denials per second; for other layouts, writes seen per
second), layout and level, after observing for --for (default 1.5s). It follows writes
with client tracking in broadcast mode (Redis 6+): on every master one connection
subscribes to __redis__:invalidate and another runs CLIENT TRACKING on REDIRECT ... BCAST,
with PREFIX the literal start of --match. Nothing in the server's configuration changes
and MONITOR is not used; both connections close at the end, which ends the tracking.
Redis cost: the server sends one message per event-loop iteration that writes keys under
the prefix, and the busiest keys are read twice (one pipelined round trip each). Keys that
are not buckets are left out; a two-key bucket's time key counts for its bucket.`,
		Example: `  bucketctl list
  bucketctl list --hot                       # the buckets being hammered now
  bucketctl list --hot --for 10s --match 'rate:*' -o json
  bucketctl list --match 'rate:user:*' --limit 50
  bucketctl list --match 'rate:*' -o jsonl > buckets.jsonl
  bucketctl list --match 'ratelimit:*' --layout webman --capacity 50 --rate 10 -o json
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
	sr, err := opts.states(&opts.Spec, opts.Output, output.StateFormats...)
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
