package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// pages is where a reset's buckets come from: the keys named, or a --match scan.
type pages interface {
	run(ctx context.Context, fn func([]bucket.State) error) error
	// end reports what the pages left out, after the output; its error is the exit.
	end() error
}

// keyPages are the keys named: all or nothing, a key that is not a bucket stops the request.
type keyPages struct {
	rd     *reading
	r      *resetter
	keys   []string
	states []bucket.State
}

func (k *keyPages) run(ctx context.Context, fn func([]bucket.State) error) error {
	if k.states != nil { // the plan confirmed: the script refuses a key changed since
		return fn(k.states)
	}
	states, err := k.rd.st.InspectWith(ctx, k.keys, k.rd.resolve, k.rd.custom)
	if err != nil {
		return err
	}
	k.states = states
	if problems, err := problemsErr(k.r.f, states); problems > 0 {
		if !slices.ContainsFunc(states, func(s bucket.State) bool { return s.Problem != "" && !s.Bare }) {
			err = &SilentError{Code: ExitUsage} // writing a bare number needs a declaration
		}
		if len(states) > 1 { // one key: its own line says it all
			fmt.Fprintf(k.r.f.IO.ErrOut, "bucketctl: nothing reset: %s\n", notBuckets(problems, len(states)))
		}
		return err
	}
	return fn(states)
}

// end is exit 6 for keys named that do not exist, unless --ignore-missing or --tokens.
func (k *keyPages) end() error {
	if k.r.opts.IgnoreMissing || k.r.opts.TokensSet {
		return nil
	}
	return missingErr(k.states)
}

// matchPages are a --match scan's pages.
type matchPages struct {
	*scanRun
	r *resetter
}

func (m *matchPages) end() error {
	if n := m.r.guesses; n > 0 {
		fmt.Fprintf(m.r.f.IO.ErrOut, "note: %s key(s) hold a bare number that only looks like a bucket (a deadline, lease or counter looks the same): left untouched; to reset one, %s\n",
			fmtCount(n), format.DeclareHint(""))
	}
	m.notes(m.r.opts.Match)
	return nil
}

// run plans, asks (or needs --yes) and applies, reading the pages again.
func (r *resetter) run(ctx context.Context, src pages) error {
	f, opts := r.f, r.opts
	if r.match && !opts.DryRun && !opts.Yes && !f.IO.CanPrompt() {
		return usagef("refusing to reset buckets matching %s without --yes: no terminal to confirm (preview with --dry-run)", safe(fmt.Sprintf("%q", opts.Match)))
	}
	if !opts.DryRun && opts.Yes {
		return r.apply(ctx, src)
	}
	sum, err := r.planPass(ctx, src)
	if err != nil {
		return err
	}
	if sum.Total == 0 {
		return r.nothing(sum, src)
	}
	if opts.DryRun {
		if err := r.printPlan(sum); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.ErrOut, "dry run: %s bucket(s) would be reset on %s; nothing changed\n", fmtCount(sum.Total), serverOf(f))
		return src.end()
	}
	if !f.IO.CanPrompt() {
		return usagef("refusing to reset %d bucket(s) without --yes: no terminal to confirm (preview with --dry-run)", sum.Total)
	}
	if r.match {
		fmt.Fprint(f.IO.ErrOut, sum.String())
	} else {
		_ = output.PrintResetTable(f.IO, f.IO.ErrOut, r.plan)
	}
	if err := confirm(f.IO, fmt.Sprintf("Reset %s bucket(s) on %s? [y/N] ", fmtCount(sum.Total), serverOf(f))); err != nil {
		return err
	}
	if ms, ok := src.(*matchPages); ok {
		ms.stats = scan.Stats{}
	}
	r.guesses, r.seen, r.plan = 0, scan.Recent{}, nil
	return r.apply(ctx, src)
}

// nothing ends a reset whose plan writes nothing.
func (r *resetter) nothing(sum *output.PlanSummary, src pages) error {
	if err := r.printPlan(sum); err != nil {
		return err
	}
	err := src.end()
	if !r.match && err == nil {
		fmt.Fprintln(r.f.IO.ErrOut, "nothing to reset")
	}
	return err
}

// printPlan prints a plan that writes nothing: the keys named, or a --match's sum on a terminal.
func (r *resetter) printPlan(sum *output.PlanSummary) error {
	if !r.match {
		return output.PrintResetPlan(r.f.IO, r.opts.Output, r.plan)
	}
	if sum.Total > 0 && r.opts.Output == output.FormatTable && r.f.IO.StdoutTTY {
		fmt.Fprint(r.f.IO.Out, sum.String())
	}
	return nil
}

// plans are the ops and rows of a page's buckets not planned before (keys named: r.plan too).
func (r *resetter) plans(page []bucket.State) ([]bucket.ResetOp, []output.ResetView, error) {
	var ops []bucket.ResetOp
	var views []output.ResetView
	for _, s := range page {
		if r.match && !r.seen.First(s.Key) {
			continue // SCAN returned it before
		}
		op, v, ok, err := r.op(s)
		if err != nil {
			return nil, nil, err
		}
		if !r.match {
			r.plan = append(r.plan, v)
		}
		if ok {
			ops, views = append(ops, op), append(views, v)
		}
	}
	return ops, views, nil
}

// planPass reads the pages for the plan, streamed in full for a --match dry run not on a terminal.
func (r *resetter) planPass(ctx context.Context, src pages) (*output.PlanSummary, error) {
	sum := &output.PlanSummary{}
	full := r.match && r.opts.DryRun && (r.opts.Output != output.FormatTable || !r.f.IO.StdoutTTY)
	out := output.NewStream(r.f.IO, r.opts.Output, output.ResetHeader...)
	err := src.run(ctx, func(page []bucket.State) error {
		_, views, err := r.plans(page)
		for _, v := range views {
			sum.Add(v)
			if full && err == nil {
				err = out.Add(v, output.ResetRow(v)...)
			}
		}
		if full && err == nil {
			err = out.Flush()
		}
		return err
	})
	if full {
		err = out.End(err)
	}
	return sum, err
}

// apply reads the pages and resets each page's buckets in batches; Ctrl-C stops after the
// batch in flight.
func (r *resetter) apply(ctx context.Context, src pages) error {
	f := r.f
	stream := r.match && (r.opts.Output != output.FormatTable || !f.IO.StdoutTTY)
	out := output.NewStream(f.IO, r.opts.Output, output.ResetHeader...)
	prog := output.NewProgress(f.IO)
	start, planned, batches, writing := time.Now(), 0, 0, false
	outcomes := map[string]bucket.ResetOutcome{}
	err := src.run(ctx, func(page []bucket.State) error {
		ops, views, err := r.plans(page)
		if err != nil {
			return err
		}
		planned, writing = planned+len(ops), true
		done := 0
		return resetBatches(ctx, r.st, ops, func(batch []bucket.ResetOp, res []bucket.ResetOutcome, err error) error {
			batches++
			for k, o := range res {
				r.tally.Add(batch[k], o)
				if !r.match {
					outcomes[batch[k].Key] = o
				} else if stream {
					v := withOutcome(views[done+k], o)
					_ = out.Add(v, output.ResetRow(v)...)
				}
			}
			done += len(batch)
			if err != nil {
				r.tally.Errs = append(r.tally.Errs, err)
			}
			if stream {
				if err := out.Flush(); err != nil {
					return err
				}
			}
			if r.match {
				n := r.tally.Reset()
				prog.Show("resetting: %s reset · %s/s", fmtCount(n), fmtCount(int(float64(n)/max(time.Since(start).Seconds(), 1e-3))))
			}
			return nil
		})
	})
	prog.Clear()
	if stream {
		err = out.End(err)
	}
	if !r.match && err != nil && !writing {
		return err // read, or not a bucket: nothing was written
	}
	someDone := len(r.tally.Errs) == 0 || r.tally.N[bucket.ResetFailed] < len(outcomes)
	if !r.match && (err == nil || batches > 0) && someDone {
		if planned == 0 && err == nil {
			return r.nothing(&output.PlanSummary{}, src)
		}
		for i := range r.plan {
			if o, ok := outcomes[r.plan[i].Key]; ok {
				r.plan[i] = withOutcome(r.plan[i], o)
			}
		}
		if perr := output.PrintResetPlan(f.IO, r.opts.Output, r.plan); perr != nil {
			return perr
		}
	}
	if r.match || (batches > 0 && someDone) {
		r.tally.Report(f.IO)
	}
	if err := r.failure(ctx, err, planned, batches); err != nil {
		return err
	}
	if !r.match {
		// A key named that the script left untouched: undeclared exits 2, changed or corrupt 1.
		switch {
		case r.tally.N[bucket.ResetUndeclared] > 0:
			return &SilentError{Code: ExitUsage}
		case r.tally.N[bucket.ResetChanged]+r.tally.N[bucket.ResetCorrupt] > 0:
			return &SilentError{Code: ExitError}
		}
	}
	return src.end()
}

// failure maps how a reset stopped to its error and exit code.
func (r *resetter) failure(ctx context.Context, err error, planned, batches int) error {
	f, n := r.f, r.tally.Reset()
	if r.match && (errors.Is(err, context.Canceled) || (err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()))) {
		fmt.Fprintf(f.IO.ErrOut, "interrupted: stopped after %s bucket(s); the scan had not finished, so more may match (run the same command again)\n", fmtCount(n))
		return &SilentError{Code: ExitInterrupted}
	}
	what, stopped := "reset --match "+format.QuoteKey(r.opts.Match), fmt.Sprintf("stopped after %s bucket(s) were reset", fmtCount(n))
	if !r.match {
		what, stopped = "reset "+format.QuoteKey(r.plan[0].Key), "(nothing changed)"
		if planned > 1 {
			what = fmt.Sprintf("reset of %s buckets", fmtCount(planned))
		}
		if batches > 0 {
			stopped = ""
			if n > 0 {
				stopped = fmt.Sprintf("(%s of %s reset)", fmtCount(n), fmtCount(planned))
			}
		}
	}
	errs := errors.Join(r.tally.Errs...)
	switch {
	case errors.Is(err, errRefused):
		return writeFailure(f, what, stopped, errs)
	case hasReply(err):
		return writeFailure(f, what, stopped, err)
	case err != nil && !r.match && batches == 0:
		return roundTripFailure(f, what, -1, err) // not sent, or unknown
	case rediserr.IsNetwork(err):
		return roundTripFailure(f, what, n, err) // the batch in flight, if any, is unknown
	case err != nil:
		return fmt.Errorf("%w (%s bucket(s) were reset before it)", err, fmtCount(n))
	case hasReply(errs) && r.match:
		return writeFailure(f, what, fmt.Sprintf("reset %s bucket(s), %s failed", fmtCount(n), fmtCount(r.tally.N[bucket.ResetFailed])), errs)
	case hasReply(errs):
		return writeFailure(f, what, stopped, errs)
	case len(r.tally.Errs) > 0:
		return fmt.Errorf("%w (%d batch(es) had errors)", r.tally.Errs[0], len(r.tally.Errs))
	}
	return nil
}

// withOutcome is v as the reset left it.
func withOutcome(v output.ResetView, o bucket.ResetOutcome) output.ResetView {
	v.Done, v.Outcome = o.Applied(), o.Name()
	return v
}

// notBuckets says why a reset of named keys wrote nothing: n of them are not buckets.
func notBuckets(n, of int) string {
	if n == of {
		return fmt.Sprintf("none of the %s keys is a bucket", fmtCount(of))
	}
	if n == 1 {
		return fmt.Sprintf("1 of %s keys is not a bucket; leave it out and run again", fmtCount(of))
	}
	return fmt.Sprintf("%s of %s keys are not buckets; leave them out and run again", fmtCount(n), fmtCount(of))
}

// resetBatch is the most buckets one pipelined round trip resets.
const resetBatch = 500

// errRefused stops a bulk reset when the server refuses writes.
var errRefused = errors.New("the server refuses writes")

// resetBatches resets ops in batches, calling done with each batch's outcomes; the batch in
// flight completes when ctx ends, a refused write stops it (errRefused).
func resetBatches(ctx context.Context, st *bucket.Store, ops []bucket.ResetOp, done func([]bucket.ResetOp, []bucket.ResetOutcome, error) error) error {
	for i := 0; i < len(ops); i += resetBatch {
		batch := ops[i:min(i+resetBatch, len(ops))]
		res, err := st.ResetMany(context.WithoutCancel(ctx), batch)
		if res == nil {
			return err
		}
		if derr := done(batch, res, err); derr != nil {
			return derr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil && rediserr.Refusal(err) != "" {
			return errRefused
		}
	}
	return nil
}
