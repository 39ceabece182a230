package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// loadPlans plans the runs' keys and gives their configs; a refused key's error comes with
// all the plans, for --dry-run.
func loadPlans(ctx context.Context, rdb bucket.Client, opts *LoadOptions) ([]load.Plan, []load.Config, error) {
	configs := opts.runs()
	keys := make([]string, len(configs))
	for i, c := range configs {
		keys[i] = c.Key
	}
	targets, err := load.Examine(ctx, rdb, keys...)
	if err != nil {
		return nil, nil, err
	}
	plans := make([]load.Plan, len(targets))
	var refused error
	for i, t := range targets {
		p, err := load.PlanFor(t, opts.Config.Spec, opts.capacityGiven, opts.rateGiven)
		plans[i] = p
		if errors.Is(err, bucket.ErrSpecDiffers) {
			given := t.Stored.Spec
			if opts.capacityGiven {
				given.Capacity = opts.Config.Spec.Capacity
			}
			if opts.rateGiven {
				given.Rate = opts.Config.Spec.Rate
			}
			return plans, configs, specDiffersErr(err, given)
		}
		if err != nil {
			refused = cmp.Or(refused, err)
			continue
		}
		c := &configs[i]
		c.Spec, c.StoredSpec = p.Spec, p.StoredSpec
		if err := c.Validate(); err != nil {
			if !t.Exists() {
				return plans, configs, &UsageError{Err: flagNames(err)}
			}
			return plans, configs, usagef("%s: %v (the bucket's stored capacity %s and rate %s; give --capacity and --rate to change them)",
				format.SafeKey(t.Key), flagNames(err), format.Tokens(p.Spec.Capacity), format.Rate(p.Spec.Rate))
		}
	}
	return plans, configs, refused
}

// confirmLoad asks before a run on existing buckets: --yes, or a person at a terminal.
func confirmLoad(f *Factory, opts *LoadOptions, plans []load.Plan) error {
	var existing, changes []string
	for _, p := range plans {
		if p.Target.Exists() {
			if existing == nil {
				changes = p.Changes
			}
			existing = append(existing, format.SafeKey(p.Target.Key))
		}
	}
	if len(existing) == 0 || opts.Yes {
		return nil
	}
	if !f.IO.CanPrompt() {
		return usagef("%s already exists: a load test would change its %s; pass --yes to run on it anyway (preview with --dry-run; nothing was touched)",
			strings.Join(existing, ", "), strings.Join(changes, ", "))
	}
	if err := output.PrintLoadPlan(f.IO, plans, opts.Yes, opts.Keep, true); err != nil {
		return err
	}
	return confirm(f.IO, fmt.Sprintf("Run the load test on %s existing bucket(s)? [y/N] ", format.Count(int64(len(existing)))))
}

// loadDryRun shows the plan, sends no decision, and exits as the run would.
func loadDryRun(f *Factory, opts *LoadOptions, plans []load.Plan, refused error) error {
	if err := output.PrintLoadPlan(f.IO, plans, opts.Yes, opts.Keep, false); err != nil {
		return err
	}
	c := opts.Config
	bound := format.Duration(c.Duration)
	switch {
	case c.Requests > 0 && c.Duration == 0:
		bound = fmt.Sprintf("%s (at most %s)", format.Plural(int(c.Requests), "request"), format.Duration(load.MaxDuration))
	case c.Requests > 0:
		bound = fmt.Sprintf("%s or %s, whichever comes first", format.Plural(int(c.Requests), "request"), format.Duration(c.Duration))
	}
	fmt.Fprintf(f.IO.ErrOut, "dry run: %s · cost %s · %s; nothing sent\n", opts.describe(), format.Tokens(c.Cost), bound)
	return refused
}

// existing leaves out the keys the server says are missing, in one round trip within d.
func existing(rdb bucket.Client, keys []string, d time.Duration) []string {
	cmds := make([]*redis.IntCmd, len(keys))
	err := load.Within(context.Background(), d, func(ctx context.Context) error {
		pipe := rdb.Pipeline()
		for i, k := range keys {
			cmds[i] = pipe.Exists(ctx, k)
		}
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return keys
	}
	var out []string
	for i, k := range keys {
		if cmds[i].Val() > 0 {
			out = append(out, k)
		}
	}
	return out
}

// loadCleanup deletes the keys the run created within wait; the error names those left and
// wraps the first cause.
func loadCleanup(rdb bucket.Client, created []string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var left []string
	var err error
	for i, k := range created {
		cerr := load.Within(context.Background(), max(time.Until(deadline), time.Millisecond), func(ctx context.Context) error {
			return load.Cleanup(ctx, rdb, k)
		})
		if cerr == nil {
			continue
		}
		left, err = append(left, k), cmp.Or(err, cerr)
		if errors.Is(cerr, context.DeadlineExceeded) {
			left = append(left, created[i+1:]...)
			break
		}
	}
	if err == nil {
		return nil
	}
	if !rediserr.IsUnreachable(err) {
		// The server answered (and refused): ask it which keys exist.
		left = existing(rdb, left, time.Until(deadline))
	}
	if len(left) == 0 {
		return nil // never written (every request refused), or gone: nothing is left behind
	}
	for i, k := range left {
		left[i] = format.SafeKey(k)
	}
	if errors.Is(err, load.ErrNotBucket) {
		return fmt.Errorf("the run's key %s was left as it is: %w", strings.Join(left, ", "), err)
	}
	if rediserr.IsNetwork(err) && !rediserr.NotSent(err) {
		return fmt.Errorf("the delete of the run's key %s was sent but its reply was lost, so it may be left behind; check it once Redis answers again: %w",
			strings.Join(left, ", "), err)
	}
	return fmt.Errorf("could not delete the run's key %s, so it is left behind; delete it once Redis answers again: %w",
		strings.Join(left, ", "), err)
}
