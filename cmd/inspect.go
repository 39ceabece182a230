package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
)

type InspectOptions struct {
	Env
	Selection
	Keys []string
	All  bool
}

func NewCmdInspect(f *Factory, runF func(*InspectOptions) error) *cobra.Command {
	opts := &InspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect KEY... | --match PATTERN",
		Short: "Show buckets: tokens refilled to now, spec, TTL, last update, counters",
		Long: commandHelp("inspect") + `Layouts: how a bucket is stored. bucketctl reads and resets all of these; consume and load
use the native one.

` + layoutTable() + commandHelp("inspect-fields"),
		Example: `  bucketctl inspect api:user:42
  bucketctl inspect api:user:42 rate:user:43 -o json
  bucketctl inspect api:user:42 --cost 5 -o json     # retry_after_ms, retry_at for 5 tokens
  bucketctl inspect --match 'rate:user:*' -o yaml
  bucketctl inspect api:ip:10.1.2.3 --layout express --capacity 100 --rate 10
  bucketctl inspect --cluster 10.0.0.1:6379 api:user:42 -o wide`,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			if err := keysOrMatch(cmd, args, opts.Match); err != nil {
				return err
			}
			limit, err := resolveLimit(cmd, f.IO, opts.Limit)
			if err != nil {
				return err
			}
			opts.Limit = limit
			if opts.Match == "" {
				f.Check = connect.PingInFirstRead
				f.quickKey(cmd)
			}
			return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, inspectRun)
		},
	}
	cmd.Flags().StringVar(&opts.Match, "match", "", "inspect every key matching this Redis glob pattern (SCAN, never KEYS)")
	addLimitFlag(cmd, &opts.Limit, "buckets (with --match)")
	cmd.Flags().BoolVar(&opts.All, "all", false, "with --match: show keys that are not buckets too")
	opts.Spec.register(cmd, f, true) // --cost: the retry-after (retry_at) it waits for
	addOutputFlag(cmd, &opts.Output, output.StateFormats...)
	return cmd
}

func inspectRun(opts *InspectOptions) error {
	sr, err := opts.states(&opts.Spec, opts.Output)
	if err != nil {
		return err
	}
	f, ctx, node := opts.src, opts.Ctx, sr.node
	out := output.NewStream(opts.IO, opts.Output, output.WithNode(node, output.InspectHeader...)...)
	var notes output.InspectNotes
	cost := func(key string) float64 { return sr.resolve(key).Cost }
	emit := output.StateWriter(out, node, output.InspectRow, notes.See, cost)
	if opts.Match == "" {
		states, err := sr.st.InspectWith(ctx, opts.Keys, sr.resolve, sr.custom)
		if err != nil {
			return err
		}
		if output.IsData(opts.Output) && len(states) == 1 { // one KEY: an object, not an array
			err = output.WriteData(f.IO.Out, opts.Output, output.StateNodeCost(states[0], node, cost))
		} else if err = emit(states); err == nil {
			err = out.Close()
		}
		if err != nil {
			return err
		}
		notes.Print(f.IO, opts.Output)
		if _, err := problemsErr(f, states); err != nil {
			return err
		}
		return missingErr(states)
	}
	run := sr.scan(opts.Match, opts.Limit, opts.All)
	if err := out.End(run.run(ctx, emit)); err != nil {
		return err
	}
	run.notes(opts.Match)
	notes.Print(f.IO, opts.Output)
	return nil
}

// problemsErr reports each of the n keys named that are not buckets on stderr: exit 1.
func problemsErr(f *Factory, states []bucket.State) (n int, err error) {
	for _, s := range states {
		if s.Problem != "" {
			n++
			fmt.Fprintf(f.IO.ErrOut, "bucketctl: %s\n", f.errText(s.NotBucketError()))
		}
	}
	if n > 0 {
		err = &SilentError{Code: ExitError}
	}
	return n, err
}

// missingErr is exit 6 when a key named does not exist: a typo must not read as full.
func missingErr(states []bucket.State) error {
	var missing []string
	for _, s := range states {
		if !s.Exists && s.Problem == "" {
			missing = append(missing, s.Key)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &NoKeyError{Keys: missing}
}
