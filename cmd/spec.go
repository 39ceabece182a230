package cmd

import (
	"context"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rules"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// SpecFlags are the flags that say what a bucket is: its spec and layout. Flags win over
// config rules, which win over what the bucket stores or what detection finds.
type SpecFlags struct {
	Capacity, Rate, Cost          float64
	Layout                        string
	CapacitySet, RateSet, CostSet bool // the flag was given (see given)
	withCost                      bool
}

func (s *SpecFlags) given(cmd *cobra.Command) {
	fl := cmd.Flags()
	s.CapacitySet, s.RateSet, s.CostSet = fl.Changed("capacity"), fl.Changed("rate"), fl.Changed("cost")
}

func (s *SpecFlags) register(cmd *cobra.Command, f *Factory, withCost bool) {
	fl := cmd.Flags()
	amountVar(fl, &s.Capacity, "capacity", 0, "bucket capacity in tokens (default: from a rule or the bucket itself)")
	rateVar(fl, &s.Rate, "rate", 0, "refill rate: 5 (per second), 5/s, 300/m, 0.5/h (default: from a rule or the bucket itself)")
	if withCost {
		amountVar(fl, &s.Cost, "cost", 1, "tokens the request costs")
		s.withCost = true
	}
	fl.StringVar(&s.Layout, "layout", "", "bucket layout (default: from a rule, else detected); see 'bucketctl inspect --help'")
	_ = cmd.RegisterFlagCompletionFunc("layout", completeLayouts(f))
}

// spec validates the flags alone, before anything touches Redis.
func (s *SpecFlags) spec() (bucket.Spec, error) {
	sp := bucket.Spec{Capacity: s.Capacity, Rate: s.Rate}
	if s.CapacitySet != s.RateSet {
		return sp, usagef("--capacity and --rate go together (a bucket needs both)")
	}
	if s.CapacitySet {
		if err := sp.Validate(); err != nil {
			return sp, &UsageError{Err: err}
		}
	}
	if s.withCost && (math.IsNaN(s.Cost) || math.IsInf(s.Cost, 0) || s.Cost < 0) {
		return sp, usagef("--cost %v: must be a finite number >= 0", s.Cost)
	}
	return sp, nil
}

// resolver turns the flags and the config's rules into a per-key Target.
func (f *Factory) resolver(s *SpecFlags) (bucket.Resolver, error) {
	sp, err := s.spec()
	if err != nil {
		return nil, err
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	var layout *bucket.Layout
	if s.Layout != "" {
		l, err := cfg.Layout(s.Layout)
		if err != nil {
			return nil, err
		}
		layout = &l
	}
	cost := s.Cost
	if !s.withCost {
		cost = 1
	}
	base := bucket.Target{Layout: layout, Spec: sp, Cost: cost}
	if !sp.IsZero() {
		base.Source = "flags"
	}
	return cfg.RuleTable().Resolver(base, s.CostSet), nil
}

// completeKeys completes keys with a short SCAN, silent on failure; a two-key bucket is
// named by its tokens key.
func completeKeys(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		defer cancel()
		if err := cmd.Root().PersistentPreRunE(cmd, nil); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := f.Store(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var custom []bucket.Layout
		if cfg, err := f.Config(); err == nil {
			custom = cfg.CustomLayouts()
		}
		pairs := bucket.TwoKeyLayouts(custom)
		var keys []string
		o := scan.Options{Match: rules.QuoteGlob(prefix) + "*", Count: 200, MaxCount: 8000, Limit: 200}
		_ = scan.Keys(ctx, st, o, func(page []string) error {
			for _, k := range page {
				if !slices.ContainsFunc(pairs, func(l bucket.Layout) bool { return l.IsTimeKey(k) }) {
					keys = append(keys, k)
				}
			}
			return nil
		})
		sort.Strings(keys)
		return keys, cobra.ShellCompDirectiveNoFileComp
	}
}

func completeContexts(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		_ = f.bindEnv()
		cfg, err := f.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return cfg.ContextNames(), cobra.ShellCompDirectiveNoFileComp
	}
}

func completeLayouts(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		names := bucket.PresetNames()
		_ = f.bindEnv()
		if cfg, err := f.Config(); err == nil {
			for n := range cfg.Layouts {
				names = append(names, n)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
