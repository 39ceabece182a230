package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/demo"
	"github.com/bucketctl/bucketctl/bucket/sandbox"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/selfcmd"
	"github.com/bucketctl/bucketctl/tui"
	"github.com/bucketctl/bucketctl/tui/format"
)

type DemoOptions struct {
	Env
	Duration  time.Duration
	InProcess bool
}

// NewCmdDemo builds `demo`: a sandbox Redis with live traffic, nothing to set up.
func NewCmdDemo(f *Factory, runF func(*DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start a sandbox Redis with live rate-limited traffic and watch it",
		Long:  commandHelp("demo"),
		Example: `  go run . demo
  bucketctl demo --duration 30s
  bucketctl demo --in-process | head -20`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Duration < 0 {
				return usagef("--duration %s: must be positive", opts.Duration)
			}
			return dispatch(cmd, f, opts, &opts.Env, nil, runF, demoRun)
		},
	}
	durationVarP(cmd.Flags(), &opts.Duration, "duration", "", 0, "stop after this long (default: on Ctrl-C on a terminal, 10s otherwise)")
	cmd.Flags().BoolVar(&opts.InProcess, "in-process", false, "use the in-process server even when redis-server is installed")
	return cmd
}

func demoRun(opts *DemoOptions) error {
	f := opts.src
	if opts.Duration == 0 && !f.IO.StdoutTTY {
		opts.Duration = 10 * time.Second
	}
	ctx, cancel := withDuration(opts.Ctx, opts.Duration)
	defer cancel()
	sb, err := sandbox.Start(ctx, sandbox.Options{ForceInProcess: opts.InProcess})
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "bucketctl: redis-server would not start (%v); using the in-process server\n", err)
		if sb, err = sandbox.Start(ctx, sandbox.Options{ForceInProcess: true}); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	defer sb.Close()
	conn := &connect.Server{URL: sb.URL(), DialTimeout: 2 * time.Second, Timeout: 2 * time.Second, PoolSize: 32}
	rdb, err := conn.NewClient()
	if err != nil {
		return err
	}
	defer rdb.Close()
	st := bucket.NewStore(rdb)
	if _, _, err := st.LoadScript(ctx); err != nil {
		return fmt.Errorf("sandbox %s: loading the script: %w", sb.Addr(), err)
	}
	keys := demo.Keys("demo:")
	if err := demo.Seed(ctx, st, keys); err != nil {
		return fmt.Errorf("sandbox %s: seeding buckets: %w", sb.Addr(), err)
	}
	try := demoTry(selfcmd.Current(), sb.Addr(), keys[0].Key)
	if !f.IO.StdoutTTY { // on a terminal the live view shows it, and it goes with the sandbox
		fmt.Fprintf(f.IO.ErrOut, "sandbox: %s at %s\n%s\n(or watch it, or list --match '*demo:*')\n", sb.Kind(), sb.URL(), try)
	}
	ctx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	traffic := make(chan struct{})
	go func() {
		defer close(traffic)
		demo.Run(ctx, st, keys)
	}()
	resolve := demo.Resolver(keys)
	if f.IO.StdoutTTY {
		err = RunTop(ctx, f.IO, st, TopParams{Match: "*demo:*", Resolve: resolve, NodeClient: conn.NodeClient,
			Addr: sb.Addr(), Server: sb.Addr() + " (demo sandbox)", Sort: tui.SortBusy, Hint: try})
	} else {
		err = demoLines(ctx, f, st, keys, resolve)
	}
	stopTraffic()
	<-traffic
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var a, d, e int64
	for _, k := range keys {
		a, d, e = a+k.Allowed.Load(), d+k.Denied.Load(), e+k.Errors.Load()
	}
	fmt.Fprintln(f.IO.ErrOut, demoSummary(a, d, e))
	return nil
}

func demoSummary(allowed, denied, errs int64) string {
	return fmt.Sprintf("demo over: %s allowed, %s denied, %s errors; sandbox stopped",
		format.Count(allowed), format.Count(denied), format.Count(errs))
}

// demoTry suggests a command to look at the sandbox from another terminal, in 80 columns.
func demoTry(self, addr, key string) string {
	if line := "  " + self + " --url " + addr + " inspect " + key; len(line) <= 78 {
		return "try this in another terminal:\n" + line
	}
	return "try this in another terminal:\n  export BUCKETCTL_URL=" + addr + "\n  " + self + " inspect " + key
}

// demoLines prints one line per second: each key's tokens and decisions in that second.
func demoLines(ctx context.Context, f *Factory, st *bucket.Store, keys []*demo.Key, resolve bucket.Resolver) error {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Key
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
			a, d := k.Allowed.Load(), k.Denied.Load()
			parts[i] = fmt.Sprintf("%s %s/%s +%d -%d", strings.TrimPrefix(k.Key, "demo:"), format.Tokens(states[i].Tokens),
				format.Tokens(k.Spec.Capacity), a-prevA[i], d-prevD[i])
			prevA[i], prevD[i] = a, d
		}
		fmt.Fprintf(f.IO.Out, "%3ds  %s\n", int(time.Since(start).Seconds()), strings.Join(parts, " | "))
	}
}
