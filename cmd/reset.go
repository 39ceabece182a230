package cmd

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// ResetOptions are the options of reset.
type ResetOptions struct {
	Env
	Selection
	Keys          []string
	Tokens        float64
	TokensSet     bool // --tokens or --empty
	Empty         bool
	DryRun        bool
	Yes           bool
	IgnoreMissing bool
}

// NewCmdReset builds `reset`.
func NewCmdReset(f *Factory, runF func(*ResetOptions) error) *cobra.Command {
	opts := &ResetOptions{}
	cmd := &cobra.Command{
		Use:   "reset KEY... | --match PATTERN",
		Short: "Refill buckets (or set them to N tokens); shows what it touches first",
		Long:  commandHelp("reset"),
		Example: `  bucketctl reset rate:user:42
  bucketctl reset --match 'rate:user:*' --dry-run
  bucketctl reset --match 'rate:user:*' --yes
  bucketctl reset rate:ip:10.0.0.7 --layout express --tokens 5 --yes -o json`,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			if err := keysOrMatch(cmd, args, opts.Match); err != nil {
				return err
			}
			switch {
			case opts.Limit < 0:
				return notNegative("--limit", opts.Limit, "no limit")
			case opts.Empty && cmd.Flags().Changed("tokens"):
				return usagef("--empty and --tokens exclude each other")
			case math.IsNaN(opts.Tokens) || math.IsInf(opts.Tokens, 0) || opts.Tokens < 0:
				return usagef("--tokens %v: must be a finite number >= 0", opts.Tokens)
			}
			opts.TokensSet = opts.Empty || cmd.Flags().Changed("tokens")
			if opts.Match == "" && (opts.Yes || !f.IO.CanPrompt()) {
				f.limitOneKey(cmd) // one deadline; a reset that may still ask keeps it per request
			}
			return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, resetRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Match, "match", "", "reset every bucket whose key matches this Redis glob pattern")
	amountVar(fl, &opts.Tokens, "tokens", 0, "write this many tokens instead of refilling")
	fl.BoolVar(&opts.Empty, "empty", false, "write 0 tokens (drain the bucket)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "show what would be reset and change nothing")
	intVar(fl, &opts.Limit, "limit", 0, "with --match: reset at most this many buckets (0 = no limit)")
	fl.BoolVar(&opts.IgnoreMissing, "ignore-missing", false, "a KEY that does not exist is no error (it is already full)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation (needed when not on a terminal)")
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output, output.FormatTable, output.FormatJSON, output.FormatYAML, output.FormatJSONL)
	return cmd
}

func resetRun(opts *ResetOptions) error {
	rd, err := opts.reading(&opts.Spec)
	if err != nil {
		return err
	}
	r := &resetter{f: opts.src, st: rd.st, opts: opts, match: opts.Match != ""}
	if opts.Spec.CapacitySet {
		r.flagSpec = bucket.Spec{Capacity: opts.Spec.Capacity, Rate: opts.Spec.Rate}
	}
	if opts.Empty {
		opts.Tokens = 0
	}
	if r.match {
		run := rd.scan(opts.Match, opts.Limit, false)
		run.listsOthers = listCommand(opts.Match)
		return r.run(opts.Ctx, &matchPages{run, r})
	}
	return r.run(opts.Ctx, &keyPages{rd: rd, r: r, keys: opts.Keys})
}

// resetter carries one reset command's plan and tallies.
type resetter struct {
	f        *Factory
	st       *bucket.Store
	opts     *ResetOptions
	tally    output.ResetTally
	flagSpec bucket.Spec // --capacity/--rate, written over a native bucket's own spec
	match    bool        // keys from --match: a guess is skipped and counted, not an error
	guesses  int
	seen     scan.Recent        // a key SCAN returns twice is reset once
	plan     []output.ResetView // every row of a reset of keys named, in their order
}

// op is the reset of one bucket and its line of the plan; ok=false: nothing to do.
func (r *resetter) op(s bucket.State) (op bucket.ResetOp, v output.ResetView, ok bool, err error) {
	v = output.ResetView{Key: s.Key, Layout: s.Layout.Name, Action: "refill (delete)"}
	if s.Problem != "" {
		return op, v, false, nil
	}
	step, err := r.step(s)
	switch {
	case errors.Is(err, bucket.ErrUndeclared) && r.match:
		r.guesses++ // a --match skips it, and says how many it skipped
		return op, v, false, nil
	case errors.Is(err, bucket.ErrUndeclared):
		return op, v, false, err // exit 2, with the advice (errorMessage)
	case errors.Is(err, bucket.ErrNoSpec):
		return op, v, false, usagef("%s: --tokens needs the bucket's capacity and rate, for the TTL that covers its refill: %s", format.QuoteKey(s.Key), specAdvice)
	case err != nil:
		return op, v, false, usagef("%s", safe(strings.TrimPrefix(err.Error(), bucket.ErrInvalid.Error()+": ")))
	}
	v.TokensBefore, v.TokensAfter = jsonTokens(step.before), jsonTokens(step.after)
	switch {
	case !step.needed:
		v.Action = "none (no key: already full)"
	case r.opts.TokensSet && !s.Exists:
		v.Action = fmt.Sprintf("create with %s tokens", format.Tokens(r.opts.Tokens))
	case r.opts.TokensSet:
		v.Action = fmt.Sprintf("set %s tokens", format.Tokens(r.opts.Tokens))
	case step.op.Respec, !step.op.To.Delete:
		v.Action = "refill" // a native bucket is written full, its spec kept
	case s.Layout.ResetWritesFull():
		v.Action = "refill (its owner's zero state)" // the owner's Reset, its version bumped
	}
	if step.op.Respec {
		v.Action += fmt.Sprintf(" with the new spec %s @ %s (stored: %s @ %s)", format.Tokens(r.flagSpec.Capacity),
			format.Rate(r.flagSpec.Rate), format.Tokens(step.storedSpec.Capacity), format.Rate(step.storedSpec.Rate))
	}
	if !step.needed {
		return step.op, v, false, nil
	}
	v.AheadMS = format.JSONMS(s.Ahead)
	if step.afterWriter != nil {
		v.TokensAfterWriterClock = jsonTokens(step.afterWriter)
		v.Note = fmt.Sprintf("stored time %s: %s reads %s tokens on the server's clock, %s on the writer's (a clock at least that fast)",
			format.Ahead(s.Ahead), s.Layout.Name, format.Tokens(max(0, *step.after)), format.Tokens(max(0, *step.afterWriter)))
	}
	return step.op, v, true, nil
}

// resetStep is the reset of one bucket as planned, with the tokens before and after as its
// application reads them, on the server's clock and (when it differs) a writer's ahead.
type resetStep struct {
	op                         bucket.ResetOp
	needed                     bool     // false: no key, and a refill (already full)
	before, after, afterWriter *float64 // nil: unknown
	storedSpec                 bucket.Spec
}

// step plans the reset of s; it fails as State.ResetOp does, with bucket.ErrNoSpec for
// tokens without a spec, or with the op's validation error.
func (r *resetter) step(s bucket.State) (resetStep, error) {
	var st resetStep
	op, err := s.ResetOp(bucket.ResetTo{Delete: !r.opts.TokensSet, Tokens: r.opts.Tokens})
	if err != nil {
		return st, err
	}
	if s.HasSpec() || s.Exists {
		before := s.Tokens
		st.before = &before
	}
	if s.Layout.Native && s.Exists && !r.flagSpec.IsZero() && r.flagSpec != s.Spec {
		op.Spec, op.Respec, st.storedSpec = r.flagSpec, true, s.Spec
		if !r.opts.TokensSet {
			op.To = bucket.ResetTo{Tokens: r.flagSpec.Capacity}
		}
	}
	st.op = op
	after := op.Spec.Capacity
	if op.To.Delete && !s.Exists {
		return st, nil // no key: already full
	}
	if !op.To.Delete {
		if r.opts.TokensSet {
			after = r.opts.Tokens
		}
		if err := op.Validate(); err != nil {
			return st, err
		}
		server, writer, differs := s.Layout.ResetReads(op.Spec, s.Stored, s.Exists, s.Now, after)
		after = server
		if differs {
			st.afterWriter = &writer
		}
	}
	st.needed = true
	if !op.To.Delete || s.HasSpec() {
		st.after = &after
	}
	return st, nil
}

// jsonTokens is a level rounded for JSON, nil for unknown.
func jsonTokens(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := format.JSONTokens(*p)
	return &v
}

// serverOf names the Redis a command acts on, for prompts and summaries.
func serverOf(f *Factory) string {
	o, err := f.Conn()
	if err != nil {
		return "Redis"
	}
	return o.Label()
}

func fmtCount(n int) string { return format.Count(int64(n)) }
