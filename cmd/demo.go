package cmd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/sandbox"
)

// DemoOptions are the options of demo.
type DemoOptions struct {
	Duration  time.Duration
	InProcess bool
	Keep      bool
}

// NewCmdDemo builds `demo`: a sandbox Redis with live traffic, nothing to set up.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start a sandbox Redis with live rate-limited traffic and watch it",
		Long: `Start a throwaway Redis on a free loopback port (a real redis-server from PATH when there is
one, otherwise an in-process server), load the script, seed buckets of several layouts, and drive
bursty Poisson traffic at a few keys while showing the buckets live. Nothing outside the sandbox
is touched; it stops on Ctrl-C or after --duration, and the sandbox goes with it.

When stdout is not a terminal it prints one line per second and stops after 10s unless
--duration says otherwise.`,
		Example: `  go run . demo
  bucketctl demo --duration 30s
  bucketctl demo --in-process | head -20`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Duration < 0 {
				return usagef("--duration %s: must be positive", opts.Duration)
			}
			if runF != nil {
				return runF(opts)
			}
			return demoRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Duration, "duration", 0, "stop after this long (default: on Ctrl-C on a terminal, 10s otherwise)")
	cmd.Flags().BoolVar(&opts.InProcess, "in-process", false, "use the in-process server even when redis-server is installed")
	return cmd
}

// demoKey is one bucket the demo drives: Poisson arrivals at mean rps, with a burst of
// burst requests every burstEvery.
type demoKey struct {
	key        string
	spec       bucket.Spec
	rps        float64
	burst      int
	burstEvery time.Duration

	allowed, denied atomic.Int64
}

func demoKeys() []*demoKey {
	return []*demoKey{
		{key: "demo:api:user:alice", spec: bucket.Spec{Capacity: 20, Rate: 5}, rps: 4, burst: 15, burstEvery: 12 * time.Second},
		{key: "demo:api:user:bob", spec: bucket.Spec{Capacity: 20, Rate: 5}, rps: 7},
		{key: "demo:api:search", spec: bucket.Spec{Capacity: 50, Rate: 20}, rps: 15, burst: 60, burstEvery: 8 * time.Second},
		{key: "demo:api:login:10.0.0.7", spec: bucket.Spec{Capacity: 5, Rate: 0.5}, rps: 0.8},
		{key: "demo:global", spec: bucket.Spec{Capacity: 200, Rate: 100}, rps: 60, burst: 150, burstEvery: 10 * time.Second},
	}
}

func demoRun(ctx context.Context, f *Factory, opts *DemoOptions) error {
	if opts.Duration == 0 && !f.IO.StdoutTTY {
		opts.Duration = 10 * time.Second
	}
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	sb, err := sandbox.Start(ctx, sandbox.Options{ForceInProcess: opts.InProcess})
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "bucketctl: redis-server would not start (%v); using the in-process server\n", err)
		if sb, err = sandbox.Start(ctx, sandbox.Options{ForceInProcess: true}); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	defer sb.Close()
	conn := &ConnOptions{URL: sb.URL(), DialTimeout: 2 * time.Second, Timeout: 2 * time.Second, PoolSize: 32}
	rdb, err := conn.NewClient()
	if err != nil {
		return err
	}
	defer rdb.Close()
	st := bucket.NewStore(rdb)
	if _, _, err := st.LoadScript(ctx); err != nil {
		return fmt.Errorf("sandbox %s: loading the script: %w", sb.Addr(), err)
	}
	if err := seedForeign(ctx, st); err != nil {
		return fmt.Errorf("sandbox %s: seeding buckets: %w", sb.Addr(), err)
	}
	fmt.Fprintf(f.IO.ErrOut, "sandbox: %s at %s — look from another terminal with:\n  bucketctl list --url %s --match 'demo:*'\n",
		sb.Kind(), sb.Addr(), sb.URL())
	keys := demoKeys()
	ctx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Add(1)
		go func(k *demoKey) {
			defer wg.Done()
			driveDemoKey(ctx, st, k)
		}(k)
	}
	resolve := demoResolver(keys)
	if f.IO.StdoutTTY {
		// The dashboard: the whole family of demo buckets, live; q quits.
		err = RunTop(ctx, f.IO, st, TopParams{Match: "demo:*", Interval: time.Second, Resolve: resolve, Addr: sb.Addr()})
		stopTraffic()
	} else {
		err = demoLines(ctx, f, st, keys, resolve)
	}
	wg.Wait()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var a, d int64
	for _, k := range keys {
		a, d = a+k.allowed.Load(), d+k.denied.Load()
	}
	fmt.Fprintf(f.IO.ErrOut, "demo over: %d allowed, %d denied; sandbox stopped\n", a, d)
	return nil
}

// driveDemoKey sends Poisson arrivals (exponential gaps) at k.rps, plus periodic bursts.
func driveDemoKey(ctx context.Context, st *bucket.Store, k *demoKey) {
	rng := rand.New(rand.NewPCG(uint64(len(k.key)), uint64(time.Now().UnixNano())))
	nextBurst := time.Now().Add(k.burstEvery / 2)
	take := func() {
		r, err := st.Take(ctx, k.key, k.spec, 1)
		switch {
		case err != nil:
		case r.Allowed:
			k.allowed.Add(1)
		default:
			k.denied.Add(1)
		}
	}
	for {
		gap := time.Duration(rng.ExpFloat64() / k.rps * float64(time.Second))
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
		take()
		if k.burst > 0 && time.Now().After(nextBurst) {
			for i := 0; i < k.burst && ctx.Err() == nil; i++ {
				take()
			}
			nextBurst = time.Now().Add(k.burstEvery)
		}
	}
}

// demoLines prints one line per second: each key's tokens and decisions in that second.
func demoLines(ctx context.Context, f *Factory, st *bucket.Store, keys []*demoKey, resolve bucket.Resolver) error {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.key
	}
	prevA, prevD := make([]int64, len(keys)), make([]int64, len(keys))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		states, err := st.Inspect(ctx, names, resolve)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		parts := make([]string, len(keys))
		for i, k := range keys {
			a, d := k.allowed.Load(), k.denied.Load()
			parts[i] = fmt.Sprintf("%s %s/%s +%d -%d", strings.TrimPrefix(k.key, "demo:"), fmtNum(states[i].Tokens),
				fmtNum(k.spec.Capacity), a-prevA[i], d-prevD[i])
			prevA[i], prevD[i] = a, d
		}
		fmt.Fprintf(f.IO.Out, "%3ds  %s\n", int(time.Since(start).Seconds()), strings.Join(parts, " | "))
	}
}

// demoResolver knows the spec of every demo bucket, the foreign ones included (their
// applications keep it in their code, as a config rule would for a real operator).
func demoResolver(keys []*demoKey) bucket.Resolver {
	specs := map[string]bucket.Spec{}
	for _, k := range keys {
		specs[k.key] = k.spec
	}
	for _, s := range foreignSeeds {
		specs[s.key] = s.spec
	}
	return func(key string) bucket.Target {
		sp, ok := specs[key]
		if !ok {
			return bucket.Target{}
		}
		return bucket.Target{Spec: sp, Source: "demo"}
	}
}

var foreignSeeds = []struct {
	key    string
	layout string
	tokens float64
	spec   bucket.Spec
}{
	{"demo:webman:ratelimit:/api/products/hot", "webman", 12, bucket.Spec{Capacity: 50, Rate: 10}},
	{"demo:gobench:user:7", "go-bench", 3, bucket.Spec{Capacity: 10, Rate: 10}},
	{"demo:spring:rate_limit:api:user_123", "spring", 40, bucket.Spec{Capacity: 100, Rate: 1}},
	{"demo:multitier:rl:user:42:1", "multi-tier", 7.5, bucket.Spec{Capacity: 50, Rate: 0.1}},
	{"demo:express:rate:user:42", "express", 55, bucket.Spec{Capacity: 100, Rate: 0.2}},
}

// seedForeign writes a bucket in each other application's layout, as that application
// would, so inspect and list have something of every kind to show.
func seedForeign(ctx context.Context, st *bucket.Store) error {
	for _, s := range foreignSeeds {
		if _, err := st.Reset(ctx, s.key, bucket.Presets[s.layout], s.spec, bucket.ResetTo{Tokens: s.tokens}); err != nil {
			return err
		}
	}
	return nil
}
