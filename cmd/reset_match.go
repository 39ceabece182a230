package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/resetplan"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// matchRun resets every bucket matching --match. Without --yes it first scans for the plan
// (a summary on a terminal) and asks; the reset itself scans again and resets each page's
// buckets in pipelined batches of compare-and-delete (or compare-and-set), so a key that is
// not a bucket by then is never touched. Ctrl-C stops after the batch in flight.
func (r *resetter) matchRun(ctx context.Context, run *scanRun) error {
	f, opts := r.f, r.opts
	if !opts.DryRun && !opts.Yes && !f.IO.CanPrompt() {
		return usagef("refusing to reset buckets matching %s without --yes: no terminal to confirm (preview with --dry-run)", safe(fmt.Sprintf("%q", opts.Match)))
	}
	if opts.DryRun || !opts.Yes {
		sum, err := r.planPass(ctx, run)
		if err != nil {
			return err
		}
		if sum.Total == 0 {
			r.guessNote()
			run.notes(opts.Match)
			return nil
		}
		if opts.DryRun {
			if opts.Output == output.FormatTable && f.IO.StdoutTTY {
				fmt.Fprint(f.IO.Out, sum.String())
			}
			fmt.Fprintf(f.IO.ErrOut, "dry run: %s bucket(s) would be reset on %s; nothing changed\n", fmtCount(sum.Total), serverOf(f))
			r.guessNote()
			run.notes(opts.Match)
			return nil
		}
		if err := r.confirm(sum.Total, func() { fmt.Fprint(f.IO.ErrOut, sum.String()) }); err != nil {
			return err
		}
		run.stats, r.guesses, r.seen = scan.Stats{}, 0, nil
	}
	return r.resetPass(ctx, run)
}

// planPass scans for the plan: streamed in full to data formats and pipes, summed up for a
// terminal.
func (r *resetter) planPass(ctx context.Context, run *scanRun) (*output.PlanSummary, error) {
	sum := &output.PlanSummary{}
	full := r.opts.DryRun && (r.opts.Output != output.FormatTable || !r.f.IO.StdoutTTY)
	out := output.NewStream(r.f.IO, r.opts.Output, "KEY", "LAYOUT", "TOKENS", "ACTION", "AFTER")
	err := run.run(ctx, func(page []bucket.State) error {
		for _, s := range page {
			if !r.first(s.Key) {
				continue // SCAN returned it before
			}
			_, v, ok, err := r.op(s)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			sum.Add(v)
			if full {
				if err := out.Add(v, output.ResetRow(v)...); err != nil {
					return err
				}
			}
		}
		if full {
			return out.Flush()
		}
		return nil
	})
	if full {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	return sum, err
}

// resetPass scans and resets page by page.
func (r *resetter) resetPass(ctx context.Context, run *scanRun) error {
	f := r.f
	stream := r.opts.Output != output.FormatTable || !f.IO.StdoutTTY
	out := output.NewStream(f.IO, r.opts.Output, "KEY", "LAYOUT", "TOKENS", "ACTION", "AFTER")
	prog := output.NewProgress(f.IO)
	start := time.Now()
	interrupted := false
	err := run.run(ctx, func(page []bucket.State) error {
		var ops []bucket.ResetOp
		var views []output.ResetView
		done := 0
		for _, s := range page {
			if !r.first(s.Key) {
				continue // SCAN returned it before
			}
			op, v, ok, err := r.op(s)
			if err != nil {
				return err
			}
			if ok {
				ops, views = append(ops, op), append(views, v)
			}
		}
		rerr := resetplan.Run(ctx, r.st, ops, func(batch []bucket.ResetOp, res []bucket.ResetOutcome, err error) error {
			for k, o := range res {
				r.tally.Add(batch[k], o)
				if stream {
					v := views[done+k]
					v.Done, v.Outcome = o == bucket.ResetDone || o == bucket.ResetCreated, output.OutcomeName(o)
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
			n := r.tally.Reset()
			prog.Show("resetting: %s reset · %s/s", fmtCount(n), fmtCount(int(float64(n)/max(time.Since(start).Seconds(), 1e-3))))
			return nil
		})
		interrupted = interrupted || (rerr != nil && errors.Is(rerr, ctx.Err()))
		return rerr
	})
	prog.Clear()
	if stream {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	output.ReportTally(f.IO, &r.tally)
	refused := errors.Is(err, resetplan.ErrRefused)
	if interrupted || errors.Is(err, context.Canceled) {
		fmt.Fprintf(f.IO.ErrOut, "interrupted: stopped after %s bucket(s); the scan had not finished, so more may match (run the same command again)\n",
			fmtCount(r.tally.Reset()))
		return &SilentError{Code: ExitInterrupted}
	}
	what, n := "reset --match "+format.QuoteKey(r.opts.Match), fmtCount(r.tally.Reset())
	stopped := fmt.Sprintf("stopped after %s bucket(s) were reset", n)
	switch {
	case refused:
		return writeFailure(f, what, stopped, errors.Join(r.tally.Errs...))
	case hasReply(err):
		return writeFailure(f, what, stopped, err)
	case rediserr.IsNetwork(err):
		// The batch in flight, if any, is unknown (*bucket.UncertainError).
		return roundTripFailure(f, what, r.tally.Reset(), err)
	case err != nil:
		return fmt.Errorf("%w (%s bucket(s) were reset before it)", err, n)
	case hasReply(errors.Join(r.tally.Errs...)):
		return writeFailure(f, what, fmt.Sprintf("reset %s bucket(s), %s failed", n, fmtCount(r.tally.Failed)), errors.Join(r.tally.Errs...))
	case len(r.tally.Errs) > 0:
		return fmt.Errorf("%w (%d batch(es) had errors)", r.tally.Errs[0], len(r.tally.Errs))
	}
	r.guessNote()
	run.notes(r.opts.Match)
	return nil
}

// guessNote says how many keys a --match left alone because they are bare numbers whose
// layout was only guessed.
func (r *resetter) guessNote() {
	if r.guesses > 0 {
		fmt.Fprintf(r.f.IO.ErrOut, "note: %s key(s) hold a bare number that only looks like a bucket (a deadline, lease or counter looks the same): left untouched; to reset one, %s\n",
			fmtCount(r.guesses), format.DeclareHint(""))
	}
}
