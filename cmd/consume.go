package cmd

import (
	"errors"
	"fmt"
	"github.com/bucketctl/bucketctl/bucket/consume"
	"github.com/bucketctl/bucketctl/cmd/output"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
	"github.com/bucketctl/bucketctl/tui/format"
)

// DecideOptions are the options of consume and check.
type DecideOptions struct {
	Env
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
config rule, or the bucket itself (native buckets store them); without them, a KEY that does
not exist is refused (exit 2: a misspelt key?). A cost above capacity is denied
("never: cost exceeds capacity") and the bucket left untouched, as the script does.

` + decisionJSONHelp + `

Exit code 0 means allowed, 4 denied (see 'bucketctl exit-codes').`,
		Example: `  bucketctl consume rate:user:42 --capacity 10 --rate 5
  bucketctl consume rate:user:42 --cost 3 -o json
  bucketctl consume rate:user:42 || echo "throttled, exit $?"
  bucketctl consume rate:user:42 --headers     # RateLimit, X-RateLimit-*, Retry-After`,
	}
	return decideCommand(cmd, f, opts, runF)
}

// NewCmdCheck builds `check`: the decision consume would make, without writing.
func NewCmdCheck(f *Factory, runF func(*DecideOptions) error) *cobra.Command {
	opts := &DecideOptions{peek: true}
	cmd := &cobra.Command{
		Use:   "check KEY",
		Short: "Say whether a request would be allowed, without consuming (exit 4 if not)",
		Long: `Peek at the bucket at KEY: would a request of --cost be allowed now? Nothing is written:
the bucket is read as inspect reads it (the same layout detection, one pipelined round trip)
and decided the way its application decides: its clamping or lack of it, its max(now, ts),
its time resolution (Spring refills in whole seconds, so retry-after ends on one). Where the
application reports another retry-after (Express truncates it to whole seconds), check shows
the true wait and says what the application will report (app_retry_after_ms).

A cost above capacity is denied: "never: cost exceeds capacity". A KEY that does not exist
is decided as the new, full bucket it would be and says "no such key" (JSON "exists":
false); allowed, it exits 6, not 0: a misspelt key must not pass for a bucket.

` + decisionJSONHelp + `

Exit code 0 means it would be allowed, 4 denied, 6 no such key (see 'bucketctl help
exit-codes').`,
		Example: `  bucketctl check rate:user:42
  bucketctl check rate:user:42 --cost 5 -o json
  bucketctl check rate:ip:10.0.0.7 --layout express --capacity 100 --rate 10`,
	}
	return decideCommand(cmd, f, opts, runF)
}

// decideCommand completes consume's and check's command: one KEY, completed from the
// server, and the decision flags.
func decideCommand(cmd *cobra.Command, f *Factory, opts *DecideOptions, runF func(*DecideOptions) error) *cobra.Command {
	cmd.Args = exactKey
	cmd.ValidArgsFunction = completeKeys(f)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Key = args[0]
		return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, decideRun)
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

func decideRun(opts *DecideOptions) error {
	if err := checkFormat(opts.Output); err != nil {
		return err
	}
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
	o, err := consume.Decide(ctx, st, opts.Key, t, opts.peek)
	var wf *consume.WriteFailed
	if errors.As(err, &wf) {
		err = writeFailure(f, "consume "+format.QuoteKey(opts.Key), "", wf.Err)
	}
	if err != nil {
		switch {
		case errors.Is(err, bucket.ErrNoKey) && opts.peek:
			// check reads: a key that does not exist is its answer (exit 6), as for inspect.
			return fmt.Errorf("%w; pass --capacity and --rate to see what a new bucket would decide", noSuchKey([]string{opts.Key}))
		case errors.Is(err, bucket.ErrNoKey):
			return usagef("%s does not exist, so it has no stored capacity/rate: check the key's spelling, or pass --capacity and --rate (a missing bucket is full)", format.QuoteKey(opts.Key))
		case errors.Is(err, bucket.ErrNoSpec):
			return usagef("%s has no stored capacity/rate and none was given: pass --capacity and --rate, or add a rule", format.QuoteKey(opts.Key))
		case errors.Is(err, bucket.ErrSpecDiffers):
			return specDiffersErr(err, t.Spec)
		}
		return err
	}
	if err := printDecision(f, opts, o.Decision, t.Cost, o.Layout, o.Exists); err != nil {
		return err
	}
	if !o.Allowed {
		return &DeniedError{Key: opts.Key}
	}
	if opts.peek && !o.Exists {
		return noSuchKey([]string{opts.Key})
	}
	return nil
}

// register adds the flags check and consume share: the spec, --headers and -o.
func (o *DecideOptions) register(cmd *cobra.Command, f *Factory) {
	o.Spec.register(cmd, f, true)
	cmd.Flags().BoolVar(&o.Headers, "headers", false, "also print the HTTP rate-limit headers an API would send for this decision")
	addOutputFlag(cmd, &o.Output)
}

func printDecision(f *Factory, opts *DecideOptions, d bucket.Decision, cost float64, layout string, exists bool) error {
	res := d.Result
	v := output.ResultOf(opts.Key, res, cost, layout)
	if opts.peek {
		v.Exists = &exists
	}
	var notes []string
	if res.RetryAfter < 0 {
		v.Note = neverNote
	}
	if d.AppDiffers(bucket.Presets[layout].Step()) {
		app := format.JSONMS(d.AppRetryAfter)
		v.AppRetryAfterMS = &app
		notes = append(notes, fmt.Sprintf("%s will report retry-after %s; the true wait is %s", layout, format.Duration(d.AppRetryAfter), format.RetryAfter(res.RetryAfter)))
	}
	v.AheadMS = format.JSONMS(d.Ahead)
	v.RetryAtExpiry, v.FullAtExpiry = d.RetryByExpiry, d.FullByExpiry
	if d.RetryByExpiry {
		notes = append(notes, fmt.Sprintf("the key expires in %s, before enough tokens refill: %s then starts a full bucket", format.Duration(res.RetryAfter), layout))
	}
	if d.Ahead > 0 {
		notes = append(notes, aheadNoteFor(bucket.Presets[layout], d.Ahead))
	}
	if d.Writer != nil {
		v.WriterClock = output.ClockOf(*d.Writer)
		if d.ClockSplit(bucket.Presets[layout].Step()) {
			w := d.Writer
			v.Ambiguous = fmt.Sprintf("%s decides on its caller's clock: a caller on the server's clock gets the answer above; the writer's clock (%s ahead) gets %s, tokens %s, retry-after %s",
				layout, format.Duration(d.Ahead), verdictWord(w.Allowed), format.Tokens(w.Remaining), format.RetryAfter(w.RetryAfter))
			notes = append(notes, v.Ambiguous)
		}
	}
	if opts.Headers {
		headers := httplimit.Headers("default", res, f.Now())
		v.Headers = map[string]string{}
		for _, k := range headerOrder {
			if val := headers.Get(k); val != "" {
				v.Headers[k] = val
			}
		}
	}
	if opts.Output != output.FormatTable {
		return output.WriteData(f.IO.Out, opts.Output, v)
	}
	for _, n := range notes {
		fmt.Fprintln(f.IO.ErrOut, "note: "+n)
	}
	verdict := "allowed"
	if !res.Allowed {
		verdict = "denied"
	}
	if f.IO.Color() {
		verdict = output.ColorVerdict(f.IO, res.Allowed, verdict)
	}
	retry := format.RetryAfter(res.RetryAfter)
	if res.RetryAfter < 0 {
		retry = neverNote
	}
	tokens := "tokens " + format.Tokens(res.Remaining) + "/" + format.Tokens(res.Spec.Capacity)
	if !exists {
		tokens = "no such key (new and full: " + tokens + ")"
	}
	_, err := fmt.Fprintf(f.IO.Out, "%s  %s  %s  retry-after %s  full-in %s\n", verdict, safe(opts.Key),
		tokens, retry, format.Duration(res.ResetAfter))
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

// decisionJSONHelp documents the decision's JSON/YAML fields, named as inspect's.
const decisionJSONHelp = `-o json/yaml fields: key, allowed, tokens (left after the decision), capacity, rate,
cost, retry_after_ms (-1: never), time_to_full_ms, layout, ahead_ms, and note,
app_retry_after_ms, headers, retry_at_expiry/full_at_expiry (the key's expiry ends the wait),
writer_clock and ambiguous (a client clock written ahead) when they apply. remaining is an alias of tokens and reset_after_ms an alias of
time_to_full_ms, kept for compatibility. Tokens are floored to 3 decimals, durations are
milliseconds to the microsecond.`

// neverNote says why a request is never allowed: no bucket ever holds more than capacity.
const neverNote = "never: cost exceeds capacity"

// aheadNote says a bucket's stored time is ahead of the server's clock.
func aheadNote(d time.Duration) string {
	return fmt.Sprintf("written %s ahead of server time: client clock skew?", format.Duration(d))
}

// aheadNoteFor says what a stored time ahead of the server's means for the layout's
// application: a GCRA TAT beyond a full window is debt (a burst lowered while a client was
// over it, or the server's clock went back), which the library waits out on the server's
// clock; for the others, a client clock running fast.
func aheadNoteFor(l bucket.Layout, d time.Duration) string {
	if l.Type == bucket.GCRA {
		return fmt.Sprintf("TAT %s beyond a full window: debt from a higher limit (burst lowered?) or a server clock that went back; the library waits it out", format.Duration(d))
	}
	return aheadNote(d)
}

func verdictWord(ok bool) string {
	if ok {
		return "allowed"
	}
	return "denied"
}

// headerOrder lists the rate-limit headers as APIs spell them, in a readable order.
var headerOrder = []string{"RateLimit-Policy", "RateLimit", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

// specDiffersErr is the usage error of a decision whose --capacity/--rate (or rule) differ
// from the spec the bucket stores: the application's spec is never rewritten by a flag.
func specDiffersErr(err error, given bucket.Spec) error {
	var sd *bucket.SpecDiffersError
	if !errors.As(err, &sd) {
		return err
	}
	return usagef("%s stores capacity %s and rate %s, and the given spec (%s @ %s) differs: the stored spec is the application's and is used as it is; drop --capacity/--rate, or change it on purpose: bucketctl reset %s --capacity %s --rate %s --yes",
		format.QuoteKey(sd.Key), format.Tokens(sd.Stored.Capacity), format.Rate(sd.Stored.Rate),
		format.Tokens(given.Capacity), format.Rate(given.Rate), shellWord(sd.Key), fmtFloatArg(given.Capacity), fmtFloatArg(given.Rate))
}

// shellWord quotes s for a POSIX shell, escaped for the terminal.
func shellWord(s string) string { return "'" + safe(strings.ReplaceAll(s, "'", `'\''`)) + "'" }

// fmtFloatArg writes a number as a flag's argument: shortest exact form.
func fmtFloatArg(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
