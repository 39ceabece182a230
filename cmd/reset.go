package cmd

import (
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
)

// ResetOptions are the options of reset.
type ResetOptions struct {
	Keys   []string
	Match  string
	Tokens float64
	Empty  bool
	DryRun bool
	Yes    bool
	Spec   SpecFlags
	Output string
}

// ResetView is one line of reset's JSON/YAML output.
type ResetView struct {
	Key          string   `json:"key" yaml:"key"`
	Layout       string   `json:"layout" yaml:"layout"`
	Action       string   `json:"action" yaml:"action"`
	TokensBefore *float64 `json:"tokens_before" yaml:"tokens_before"`
	TokensAfter  *float64 `json:"tokens_after" yaml:"tokens_after"`
	Done         bool     `json:"done" yaml:"done"`
}

// NewCmdReset builds `reset`.
func NewCmdReset(f *Factory, runF func(*ResetOptions) error) *cobra.Command {
	opts := &ResetOptions{}
	cmd := &cobra.Command{
		Use:   "reset KEY... | --match PATTERN",
		Short: "Refill buckets (or set them to N tokens); shows what it touches first",
		Long: `Reset buckets of any layout. By default a bucket is refilled by deleting its key(s): every
layout reads a missing bucket as full, so this is exact for every application. --tokens N (or
--empty) instead writes N tokens and the current time in the layout's own fields and time unit,
atomically (both keys of a two-key layout together), so the owning application reads exactly N.

Keys holding anything but a bucket are refused and left untouched. reset lists what it will
touch; it asks for confirmation on a terminal and needs --yes otherwise. --dry-run changes
nothing.`,
		Example: `  bucketctl reset rate:user:42
  bucketctl reset --match 'rate:user:*' --dry-run
  bucketctl reset --match 'rate:user:*' --yes
  bucketctl reset rate:ip:10.0.0.7 --layout express --tokens 5 --yes -o json`,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			switch {
			case len(args) == 0 && opts.Match == "":
				return usagef("reset needs KEY... or --match PATTERN (see 'bucketctl reset --help')")
			case len(args) > 0 && opts.Match != "":
				return usagef("give keys or --match, not both")
			case opts.Empty && cmd.Flags().Changed("tokens"):
				return usagef("--empty and --tokens exclude each other")
			case math.IsNaN(opts.Tokens) || math.IsInf(opts.Tokens, 0) || opts.Tokens < 0:
				return usagef("--tokens %v: must be a finite number >= 0", opts.Tokens)
			}
			if runF != nil {
				return runF(opts)
			}
			return resetRun(cmd, f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Match, "match", "", "reset every bucket whose key matches this Redis glob pattern")
	fl.Float64Var(&opts.Tokens, "tokens", 0, "write this many tokens instead of refilling")
	fl.BoolVar(&opts.Empty, "empty", false, "write 0 tokens (drain the bucket)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "show what would be reset and change nothing")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation (needed when not on a terminal)")
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func resetRun(cmd *cobra.Command, f *Factory, opts *ResetOptions) error {
	if err := checkFormat(opts.Output); err != nil {
		return err
	}
	resolve, err := f.resolver(cmd, &opts.Spec)
	if err != nil {
		return err
	}
	setTokens := opts.Empty || cmd.Flags().Changed("tokens")
	ctx := cmd.Context()
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var states []bucket.State
	if opts.Match != "" {
		err = scanStates(ctx, f, st, opts.Match, resolve, func(p []bucket.State) error {
			states = append(states, p...)
			return nil
		})
	} else {
		states, err = st.Inspect(ctx, opts.Keys, resolve)
	}
	if err != nil {
		return err
	}

	var plan []ResetView
	var todo []bucket.State
	for _, s := range states {
		if s.Problem != "" {
			continue
		}
		v := ResetView{Key: s.Key, Layout: s.Layout.Name, Action: "refill (delete)"}
		if s.HasSpec() || s.Exists {
			before := s.Tokens
			v.TokensBefore = &before
		}
		after := s.Spec.Capacity
		if setTokens {
			after = opts.Tokens
			v.Action = fmt.Sprintf("set %s tokens", fmtNum(after))
			if s.HasSpec() && after > s.Spec.Capacity {
				return usagef("--tokens %v exceeds the capacity %v of %s", after, s.Spec.Capacity, s.Key)
			}
		} else if !s.Exists {
			v.Action = "none (no key: already full)"
			plan = append(plan, v)
			continue
		}
		if setTokens || s.HasSpec() {
			v.TokensAfter = &after
		}
		plan = append(plan, v)
		todo = append(todo, s)
	}
	if err := problemsErr(f, states); err != nil && len(todo) == 0 {
		return err
	}
	if len(todo) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "nothing to reset")
		return printPlan(f, opts, plan)
	}
	if opts.DryRun {
		if err := printPlan(f, opts, plan); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "dry run: %d bucket(s) would be reset; nothing changed\n", len(todo))
		return problemsErr(f, states)
	}
	if !opts.Yes {
		if !f.IO.CanPrompt() {
			return usagef("refusing to reset %d bucket(s) without --yes: no terminal to confirm (preview with --dry-run)", len(todo))
		}
		w := f.IO.Out
		f.IO.Out = f.IO.ErrOut
		_ = printPlan(f, &ResetOptions{Output: FormatTable}, plan)
		f.IO.Out = w
		answer, err := f.IO.Prompt(fmt.Sprintf("Reset %d bucket(s)? [y/N] ", len(todo)))
		if err != nil {
			return err
		}
		if a := strings.ToLower(answer); a != "y" && a != "yes" {
			fmt.Fprintln(f.IO.ErrOut, "cancelled: nothing changed")
			return &SilentError{Code: ExitError}
		}
	}
	done := map[string]bool{}
	progress := f.IO.StderrTTY && len(todo) >= 200
	for i, s := range todo {
		if _, err := st.Reset(ctx, s.Key, s.Layout, s.Spec, bucket.ResetTo{Delete: !setTokens, Tokens: opts.Tokens}); err != nil {
			if progress {
				fmt.Fprintln(f.IO.ErrOut)
			}
			_ = printPlanDone(f, opts, plan, done)
			return fmt.Errorf("reset %s: %w (%d of %d done)", s.Key, err, len(done), len(todo))
		}
		done[s.Key] = true
		if progress && (i%100 == 99 || i == len(todo)-1) {
			fmt.Fprintf(f.IO.ErrOut, "\rresetting: %d/%d", i+1, len(todo))
		}
	}
	if progress {
		fmt.Fprintln(f.IO.ErrOut)
	}
	if err := printPlanDone(f, opts, plan, done); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "reset %d bucket(s)\n", len(done))
	return problemsErr(f, states)
}

func printPlanDone(f *Factory, opts *ResetOptions, plan []ResetView, done map[string]bool) error {
	for i := range plan {
		plan[i].Done = done[plan[i].Key]
	}
	return printPlan(f, opts, plan)
}

func printPlan(f *Factory, opts *ResetOptions, plan []ResetView) error {
	if opts.Output != FormatTable {
		return writeData(f.IO.Out, opts.Output, plan)
	}
	t := newTable(f.IO, "KEY", "LAYOUT", "TOKENS", "ACTION", "AFTER")
	num := func(p *float64) string {
		if p == nil {
			return "?"
		}
		return fmtNum(*p)
	}
	for _, v := range plan {
		action := v.Action
		if v.Done {
			action += " ✓"
		}
		t.add(v.Key, v.Layout, num(v.TokensBefore), action, num(v.TokensAfter))
	}
	return t.render()
}
