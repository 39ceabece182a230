package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// DecideOptions are the options of consume and check (peek).
type DecideOptions struct {
	Env
	Key     string
	Spec    SpecFlags
	Output  string
	Headers bool // also print the HTTP rate-limit headers
	peek    bool
}

// NewCmdConsume builds `consume`: take tokens, atomically, with the native script.
func NewCmdConsume(f *Factory, runF func(*DecideOptions) error) *cobra.Command {
	return decideCommand(f, &DecideOptions{}, runF, &cobra.Command{
		Use:   "consume KEY",
		Short: "Take tokens from a bucket (exit 4 when denied)",
		Long:  commandHelp("consume") + "\n\n" + commandHelp("decision-json") + "\n\n" + commandHelp("consume-exit"),
		Example: `  bucketctl consume rate:user:42 --capacity 10 --rate 5
  bucketctl consume rate:user:42 --cost 3 -o json
  bucketctl consume rate:user:42 || echo "throttled, exit $?"
  bucketctl consume rate:user:42 --headers     # RateLimit, X-RateLimit-*, Retry-After`,
	})
}

// NewCmdCheck builds `check`: the decision consume would make, without writing.
func NewCmdCheck(f *Factory, runF func(*DecideOptions) error) *cobra.Command {
	return decideCommand(f, &DecideOptions{peek: true}, runF, &cobra.Command{
		Use:   "check KEY",
		Short: "Say whether a request would be allowed, without consuming (exit 4 if not)",
		Long:  commandHelp("check") + "\n\n" + commandHelp("decision-json") + "\n\n" + commandHelp("check-exit"),
		Example: `  bucketctl check rate:user:42
  bucketctl check rate:user:42 --cost 5 -o json
  bucketctl check rate:ip:10.0.0.7 --layout express --capacity 100 --rate 10`,
	})
}

// decideCommand adds consume's and check's KEY and flags.
func decideCommand(f *Factory, opts *DecideOptions, runF func(*DecideOptions) error, cmd *cobra.Command) *cobra.Command {
	cmd.Args = exactKey
	cmd.ValidArgsFunction = completeKeys(f)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Key = args[0]
		f.quickKey(cmd)
		return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, decideRun)
	}
	opts.Spec.register(cmd, f, true)
	cmd.Flags().BoolVar(&opts.Headers, "headers", false, "also print the HTTP rate-limit headers an API would send for this decision")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func decideRun(opts *DecideOptions) error {
	f := opts.src
	resolve, err := f.resolver(&opts.Spec)
	if err != nil {
		return err
	}
	t := resolve(opts.Key)
	if !opts.peek && t.Layout != nil && !t.Layout.Native {
		return usagef("consume decides with the native script only; %q uses layout %s (use check, inspect or reset)", opts.Key, t.Layout.Name)
	}
	ctx := opts.Ctx
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	o, err := decide(ctx, f, st, opts.Key, t, opts.peek)
	if err != nil {
		switch {
		case errors.Is(err, bucket.ErrNoKey) && opts.peek:
			return fmt.Errorf("%w; pass --capacity and --rate to see what a new bucket would decide", &NoKeyError{Keys: []string{opts.Key}})
		case errors.Is(err, bucket.ErrNoKey):
			return usagef("%s does not exist, so it has no stored capacity/rate: check the key's spelling (or it expired full: a bucket's key expires once it has refilled), or pass --capacity and --rate (a missing bucket is full)", format.QuoteKey(opts.Key))
		case errors.Is(err, bucket.ErrNoSpec):
			return usagef("%s has no stored capacity/rate and none was given: %s", format.QuoteKey(opts.Key), specAdvice)
		case errors.Is(err, bucket.ErrSpecDiffers):
			return specDiffersErr(err, t.Spec)
		}
		return err
	}
	if err := output.PrintDecision(opts.IO, o.Decision, output.DecisionOf{Key: opts.Key, Cost: t.Cost, Layout: o.Layout, Exists: o.Exists,
		Peek: opts.peek, Headers: opts.Headers, Format: opts.Output, Now: opts.Now(), State: o.State}); err != nil {
		return err
	}
	if !o.Allowed {
		return &DeniedError{Key: opts.Key}
	}
	if opts.peek && !o.Exists {
		return &NoKeyError{Keys: []string{opts.Key}}
	}
	return nil
}

// decision is a decision with the layout the key was read as and whether it exists.
type decision struct {
	bucket.Decision
	Layout string
	Exists bool
	State  *bucket.State // the bucket as read (nil when the script decided)
}

// decide decides for key with target t: a check when peek, else a consume.
func decide(ctx context.Context, f *Factory, st *bucket.Store, key string, t bucket.Target, peek bool) (decision, error) {
	never := !t.Spec.IsZero() && t.Cost > t.Spec.Capacity // denied unwritten: a read decides
	if peek || never {
		return readDecision(ctx, st, key, t, peek)
	}
	res, err := st.Take(ctx, key, t.Spec, t.Cost)
	if err == nil {
		return decision{Decision: bucket.Decision{Result: res}, Layout: bucket.NativeLayout.Name, Exists: true}, nil
	}
	if errors.Is(err, bucket.ErrWrongType) || errors.Is(err, bucket.ErrForeign) {
		// A read names what the script refused.
		if _, rerr := readDecision(ctx, st, key, t, false); rerr != nil && !rediserr.IsUnreachable(rerr) {
			return decision{}, rerr
		}
	}
	return decision{}, writeFailure(f, "consume "+format.QuoteKey(key), "", &bucket.KeyError{Key: key, Err: err})
}

// readDecision decides as the bucket's application does; a consume refuses what the native
// script would (another layout, another spec).
func readDecision(ctx context.Context, st *bucket.Store, key string, t bucket.Target, peek bool) (decision, error) {
	states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return t })
	if err != nil {
		return decision{}, err
	}
	s := states[0]
	if s.Problem != "" {
		return decision{Exists: true}, s.NotBucketError()
	}
	if !peek && !s.Layout.Native {
		what := fmt.Sprintf("a bucket of layout %s: consume works on native buckets only; use inspect, check or reset", s.Layout.Name)
		if s.Guess != "" { // not proven to be a bucket at all: not said to be another one's
			what = fmt.Sprintf("read as layout %s only by a guess (%s): consume works on native buckets only",
				s.Layout.Name, strings.TrimPrefix(s.Guess, "a guess: "))
		}
		return decision{Exists: true}, fmt.Errorf("%w: %q is %s", bucket.ErrForeign, key, what)
	}
	if !peek && s.Exists && !t.Spec.IsZero() && t.Spec != s.Spec {
		return decision{Exists: true}, &bucket.SpecDiffersError{Key: key, Stored: s.Spec}
	}
	if _, err := s.Peek(t.Cost); err != nil {
		return decision{Exists: s.Exists}, err
	}
	return decision{Decision: s.Decide(t.Cost), Layout: s.Layout.Name, Exists: s.Exists, State: &s}, nil
}

// specDiffersErr is the usage error of a spec differing from the stored one, in exact values.
func specDiffersErr(err error, given bucket.Spec) error {
	var sd *bucket.SpecDiffersError
	if !errors.As(err, &sd) {
		return err
	}
	return usagef("%s stores capacity %s and rate %s/s, and the given spec (%s @ %s/s) differs: the stored spec is the application's and is used as it is; drop --capacity/--rate, or change it on purpose: bucketctl reset %s --capacity %s --rate %s --yes",
		format.QuoteKey(sd.Key), format.Exact(sd.Stored.Capacity), format.Exact(sd.Stored.Rate),
		format.Exact(given.Capacity), format.Exact(given.Rate), shellWord(sd.Key), format.Exact(given.Capacity), format.Exact(given.Rate))
}

// shellWord quotes s for a POSIX shell, escaped for the terminal.
func shellWord(s string) string { return "'" + safe(strings.ReplaceAll(s, "'", `'\''`)) + "'" }
