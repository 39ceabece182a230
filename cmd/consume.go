package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
)

// DecideOptions are the options of consume and check.
type DecideOptions struct {
	Key    string
	Spec   SpecFlags
	Output string
	// Headers prints the HTTP rate-limit headers an API would send for the decision.
	Headers bool
	peek    bool
}

// NewCmdConsume builds `consume`: take tokens, atomically, with the native script.
func NewCmdConsume(f *Factory, runF func(*DecideOptions) error) *cobra.Command {
	opts := &DecideOptions{}
	cmd := &cobra.Command{
		Use:   "consume KEY",
		Short: "Take tokens from a bucket (exit 4 when denied)",
		Long: `Take --cost tokens from the bucket at KEY if it holds them, in one atomic script call
with Redis server time. A missing bucket starts full. Capacity and rate come from the flags, a
config rule, or the bucket itself (native buckets store them).

Exit code 0 means allowed, 4 denied (see 'bucketctl exit-codes').`,
		Example: `  bucketctl consume rate:user:42 --capacity 10 --rate 5
  bucketctl consume rate:user:42 --cost 3 -o json
  bucketctl consume rate:user:42 || echo "throttled, exit $?"
  bucketctl consume rate:user:42 --headers     # RateLimit, X-RateLimit-*, Retry-After`,
		Args:              exactKey,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF != nil {
				return runF(opts)
			}
			return decideRun(cmd, f, opts)
		},
	}
	opts.register(cmd, f)
	return cmd
}

// NewCmdCheck builds `check`: the decision consume would make, without writing.
func NewCmdCheck(f *Factory, runF func(*DecideOptions) error) *cobra.Command {
	opts := &DecideOptions{peek: true}
	cmd := &cobra.Command{
		Use:   "check KEY",
		Short: "Say whether a request would be allowed, without consuming (exit 4 if not)",
		Long: `Peek at the bucket at KEY: would a request of --cost be allowed now? Nothing is written:
native buckets are checked by the script run read-only (EVALSHA_RO); buckets of other layouts
are read and computed here from their stored state and the spec.

Exit code 0 means it would be allowed, 4 denied (see 'bucketctl exit-codes').`,
		Example: `  bucketctl check rate:user:42
  bucketctl check rate:user:42 --cost 5 -o json
  bucketctl check rate:ip:10.0.0.7 --layout express --capacity 100 --rate 10`,
		Args:              exactKey,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF != nil {
				return runF(opts)
			}
			return decideRun(cmd, f, opts)
		},
	}
	opts.register(cmd, f)
	return cmd
}

func exactKey(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s needs exactly one KEY, got %d (see '%s --help')", cmd.Name(), len(args), cmd.CommandPath())
	}
	if args[0] == "" {
		return usagef("KEY is empty")
	}
	return nil
}

func decideRun(cmd *cobra.Command, f *Factory, opts *DecideOptions) error {
	if err := checkFormat(opts.Output); err != nil {
		return err
	}
	resolve, err := f.resolver(cmd, &opts.Spec)
	if err != nil {
		return err
	}
	t := resolve(opts.Key)
	if !opts.peek && t.Layout != nil && !t.Layout.Native {
		return usagef("consume decides with the native script only; %q uses layout %s (use check, inspect or reset)", opts.Key, t.Layout.Name)
	}
	ctx := cmd.Context()
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var res bucket.Result
	layout := bucket.NativeLayout.Name
	if opts.peek {
		res, layout, err = peek(ctx, st, opts.Key, t)
	} else {
		res, err = st.Take(ctx, opts.Key, t.Spec, t.Cost)
	}
	if err != nil {
		if errors.Is(err, bucket.ErrNoSpec) {
			return usagef("%q has no stored capacity/rate and none was given: pass --capacity and --rate, or add a rule", opts.Key)
		}
		return err
	}
	if res.RetryAfter < 0 {
		return usagef("cost %v exceeds the bucket's capacity %v: such a request can never be allowed", t.Cost, res.Spec.Capacity)
	}
	if err := printDecision(f, opts, res, t.Cost, layout); err != nil {
		return err
	}
	if !res.Allowed {
		return &DeniedError{Key: opts.Key}
	}
	return nil
}

// peek checks natively with the read-only script, and reads other layouts here.
func peek(ctx context.Context, st *bucket.Store, key string, t bucket.Target) (bucket.Result, string, error) {
	if t.Layout == nil || t.Layout.Native {
		res, err := st.Peek(ctx, key, t.Spec, t.Cost)
		if err == nil || t.Layout != nil || !errors.Is(err, bucket.ErrForeign) {
			return res, bucket.NativeLayout.Name, err
		}
	}
	states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return t })
	if err != nil {
		return bucket.Result{}, "", err
	}
	s := states[0]
	if s.Problem != "" {
		return bucket.Result{}, "", fmt.Errorf("%w: %q %s", bucket.ErrWrongType, key, s.Problem)
	}
	res, err := s.Peek(t.Cost)
	return res, s.Layout.Name, err
}

// register adds the flags check and consume share: the spec, --headers and -o.
func (o *DecideOptions) register(cmd *cobra.Command, f *Factory) {
	o.Spec.register(cmd, f, true)
	cmd.Flags().BoolVar(&o.Headers, "headers", false, "also print the HTTP rate-limit headers an API would send for this decision")
	addOutputFlag(cmd, &o.Output)
}

func printDecision(f *Factory, opts *DecideOptions, res bucket.Result, cost float64, layout string) error {
	v := resultView(opts.Key, res, cost, layout)
	if opts.Headers {
		headers := httplimit.Headers("default", res, f.Now())
		v.Headers = map[string]string{}
		for _, k := range headerOrder {
			if val := headers.Get(k); val != "" {
				v.Headers[k] = val
			}
		}
	}
	if opts.Output != FormatTable {
		return writeData(f.IO.Out, opts.Output, v)
	}
	verdict := "allowed"
	if !res.Allowed {
		verdict = "denied"
	}
	if f.IO.Color() {
		verdict = colorVerdict(res.Allowed, verdict)
	}
	_, err := fmt.Fprintf(f.IO.Out, "%s  %s  tokens %s/%s  retry-after %s  full-in %s\n", verdict, opts.Key,
		fmtNum(res.Remaining), fmtNum(res.Spec.Capacity), fmtDur(res.RetryAfter), fmtDur(res.ResetAfter))
	if err != nil || v.Headers == nil {
		return err
	}
	status := "HTTP/1.1 200 OK"
	if !res.Allowed {
		status = "HTTP/1.1 429 Too Many Requests"
	}
	if _, err := fmt.Fprintln(f.IO.Out, status); err != nil {
		return err
	}
	for _, k := range headerOrder {
		if val, ok := v.Headers[k]; ok {
			if _, err := fmt.Fprintf(f.IO.Out, "%s: %s\n", k, val); err != nil {
				return err
			}
		}
	}
	return nil
}

// headerOrder lists the rate-limit headers as APIs spell them, in a readable order.
var headerOrder = []string{"RateLimit-Policy", "RateLimit", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
