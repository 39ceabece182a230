package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/tui/format"
)

type LoadOptions struct {
	Env
	Key                      string
	Config                   load.Config
	Strategy                 string
	Arrival                  string
	Compare                  bool
	RawKey                   bool
	Yes                      bool
	Keep                     bool
	DryRun                   bool
	Output                   string
	capacityGiven, rateGiven bool // the flags were set
}

func NewCmdLoad(f *Factory, runF func(*LoadOptions) error) *cobra.Command {
	opts := &LoadOptions{}
	c := &opts.Config
	cmd := &cobra.Command{
		Use:   "load KEY",
		Short: "Load-test a bucket: throughput, latency, allowed vs the theoretical maximum",
		Long:  commandHelp("load"),
		Example: `  bucketctl load api --capacity 10 --rate 10 --concurrency 64 --duration 3s
  bucketctl load api --compare --capacity 10 --rate 10 --concurrency 64 --duration 3s
  bucketctl load api --capacity 1e12 --rate 1e12 -c 64 --pipeline 16 --requests 1000000 -o json
  bucketctl load api --arrival poisson --arrival-rate 200 --burst-every 2s --burst-size 100
  bucketctl load api:user:42 --raw-key --yes --capacity 10 --rate 5 --duration 5s`,
		Args: exactKey,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if err := opts.complete(cmd); err != nil {
				return err
			}
			return dispatch(cmd, f, opts, &opts.Env, nil, runF, loadRun)
		},
	}
	fl := cmd.Flags()
	amountVar(fl, &c.Spec.Capacity, "capacity", 10, "bucket capacity in tokens")
	rateVar(fl, &c.Spec.Rate, "rate", 10, "refill rate: 5 (per second), 5/s, 300/m, 0.5/h")
	amountVar(fl, &c.Cost, "cost", 1, "tokens each request takes")
	intVarP(fl, &c.Concurrency, "concurrency", "c", 16, "workers, each with its own connection")
	durationVarP(fl, &c.Duration, "duration", "d", load.DefaultDuration, fmt.Sprintf("stop after this long (at most %s)", load.MaxDuration))
	int64VarP(fl, &c.Requests, "requests", "n", 0, "stop after this many requests (0: bounded by --duration only)")
	fl.StringVar(&opts.Arrival, "arrival", string(load.Closed), "arrivals: closed (as fast as possible), constant or poisson (open loop)")
	rateVar(fl, &c.ArrivalRate, "arrival-rate", 0, "open loop: mean requests per second (200, 200/s, 600/m)")
	durationVarP(fl, &c.BurstEvery, "burst-every", "", 0, "poisson/constant: add a burst this often")
	intVar(fl, &c.BurstSize, "burst-size", 0, "requests in each burst, all due at once")
	fl.StringVar(&opts.Strategy, "strategy", string(load.Lua), "decision strategy: lua (atomic script), multi or watch (naive, for comparison)")
	fl.BoolVar(&opts.Compare, "compare", false, "run lua, multi and watch in turn on fresh keys and compare them")
	intVar(fl, &c.Pipeline, "pipeline", 1, "decisions per round trip (lua, closed loop)")
	intVar(fl, &c.WatchRetries, "watch-retries", load.DefaultWatchRetries, "watch: retries of one decision before it counts as an error")
	fl.Uint64Var(&c.Seed, "seed", 1, "seed of the Poisson arrivals (same seed, same schedule)")
	fl.BoolVar(&opts.RawKey, "raw-key", false, "use KEY as given instead of bucketctl:load:KEY")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "run on an existing native bucket (its tokens, ts, counters and TTL will change)")
	fl.BoolVar(&opts.Keep, "keep", false, "keep the keys the run created (default: delete them at the end)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "show the keys and the plan; send no decision")
	_ = cmd.RegisterFlagCompletionFunc("arrival", fixedCompletions(load.Names(load.Arrivals)...))
	_ = cmd.RegisterFlagCompletionFunc("strategy", fixedCompletions(load.Names(load.Strategies)...))
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// complete checks the flags and fills in the config, before anything touches Redis.
func (o *LoadOptions) complete(cmd *cobra.Command) error {
	c := &o.Config
	c.Strategy, c.Arrival = load.Strategy(o.Strategy), load.Arrival(o.Arrival)
	if o.Compare && cmd.Flags().Changed("strategy") {
		return usagef("--compare runs every strategy; drop --strategy")
	}
	if o.Compare && c.Pipeline > 1 {
		return usagef("--compare runs multi and watch too, which cannot pipeline; drop --pipeline")
	}
	if c.Requests > 0 && !cmd.Flags().Changed("duration") {
		c.Duration = 0 // bounded by the requests, and by the hard cap
	}
	if cmd.Flags().Changed("duration") && c.Duration <= 0 {
		return usagef("--duration %s: must be > 0", c.Duration)
	}
	if err := firstErr(atLeast("--concurrency", c.Concurrency, 1), atLeast("--pipeline", c.Pipeline, 1),
		atLeast("--watch-retries", c.WatchRetries, 1)); err != nil {
		return err
	}
	c.Key = load.KeyFor(o.Key, o.RawKey)
	o.capacityGiven, o.rateGiven = cmd.Flags().Changed("capacity"), cmd.Flags().Changed("rate")
	for _, cc := range o.runs() {
		if err := cc.Validate(); err != nil {
			return &UsageError{Err: flagNames(err)}
		}
	}
	return nil
}

// loadFlagNames maps the start of a config error to its flag, longer prefixes first.
var loadFlagNames = []struct{ from, to string }{
	{"arrival rate", "--arrival-rate"}, {"an arrival rate and bursts need an open loop (constant or poisson arrivals)",
		"--arrival-rate, --burst-every and --burst-size need an open loop: add --arrival constant or --arrival poisson"},
	{"arrival ", "--arrival "}, {"bursts", "--burst-every/--burst-size"}, {"pipeline", "--pipeline"},
	{"concurrency", "--concurrency"}, {"duration", "--duration"}, {"requests", "--requests"},
	{"cost", "--cost"}, {"capacity", "--capacity"}, {"rate ", "--rate "}, {"strategy", "--strategy"},
}

// flagNames rewords a config error in terms of the flags.
func flagNames(err error) error {
	msg := strings.TrimPrefix(err.Error(), bucket.ErrInvalid.Error()+": ")
	for _, n := range loadFlagNames {
		if strings.HasPrefix(msg, n.from) {
			return errors.New(n.to + strings.TrimPrefix(msg, n.from))
		}
	}
	return errors.New(msg)
}

// runs are the configs of the runs, one per strategy, each on its own key.
func (o *LoadOptions) runs() []load.Config {
	if !o.Compare {
		return []load.Config{o.Config}
	}
	configs := make([]load.Config, len(load.Strategies))
	for i, s := range load.Strategies {
		configs[i] = o.Config
		configs[i].Strategy, configs[i].Key = s, load.CompareKey(o.Config.Key, s)
	}
	return configs
}

// describe is the run in a few words: "lua · closed loop · 64 workers".
func (o *LoadOptions) describe() string {
	c := o.Config
	s := string(c.Strategy)
	if o.Compare {
		s = strings.Join(load.Names(load.Strategies), ", ")
	}
	if c.Arrival == load.Closed {
		s += " · closed loop"
	} else {
		s += fmt.Sprintf(" · %s %s", c.Arrival, format.Rate(c.ArrivalRate))
	}
	s += " · " + format.Plural(c.Concurrency, "worker")
	if c.Pipeline > 1 {
		s += fmt.Sprintf(" · pipeline %d", c.Pipeline)
	}
	return s
}
