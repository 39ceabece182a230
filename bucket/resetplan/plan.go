package resetplan

import (
	"context"
	"errors"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Batch is the most buckets one pipelined round trip resets.
const Batch = 500

// Settings say what every reset of a plan leaves behind.
type Settings struct {
	// SetTokens writes Tokens (and the time) instead of deleting the bucket's keys.
	SetTokens bool
	Tokens    float64
	// Spec is the spec given for the reset (zero without): on a native bucket storing
	// another spec, the reset writes this one on purpose.
	Spec bucket.Spec
}

// Step is the reset of one bucket as planned.
type Step struct {
	Op bucket.ResetOp
	// Needed is false for a key that needs nothing (no key, and a refill: already full).
	Needed bool
	// Before is the bucket's tokens when known; After what its application reads right
	// after the reset on the server's clock (nil: unknown), AfterWriter on the clock of a
	// writer whose stored time is ahead, when it differs.
	Before, After, AfterWriter *float64
	// Ahead is how far the stored time is ahead of the server's.
	Ahead time.Duration
	// Respec: the reset writes Settings.Spec over the stored spec StoredSpec.
	Respec     bool
	StoredSpec bucket.Spec
}

// For plans the reset of s. It fails as bucket.State.ResetOp does for a key that is not a
// bucket or a guessed bare number (bucket.ErrUndeclared), with an error wrapping
// bucket.ErrNoSpec when tokens are to be written without a spec, and with the op's
// validation error.
func For(s bucket.State, set Settings) (Step, error) {
	st := Step{Ahead: s.Ahead}
	op, err := s.ResetOp(bucket.ResetTo{Delete: !set.SetTokens, Tokens: set.Tokens})
	if err != nil {
		return st, err
	}
	if s.HasSpec() || s.Exists {
		before := s.Tokens
		st.Before = &before
	}
	if s.Layout.Native && s.Exists && !set.Spec.IsZero() && set.Spec != s.Spec {
		// A spec given on a native bucket storing another: the operator changes the
		// application's spec on purpose. The bucket is written (refilled to the new
		// capacity without tokens) with the new spec, and its TTL covers the new spec.
		op.Spec, op.Respec = set.Spec, true
		st.Respec, st.StoredSpec = true, s.Spec
		if !set.SetTokens {
			op.To = bucket.ResetTo{Tokens: set.Spec.Capacity}
		}
	}
	st.Op = op
	after := op.Spec.Capacity
	if !op.To.Delete {
		if set.SetTokens {
			after = set.Tokens
		}
		if err := op.Validate(); err != nil {
			return st, err
		}
	} else if !s.Exists {
		return st, nil // no key: already full
	}
	st.Needed = true
	if !op.To.Delete {
		// What the application reads right after the write, in its own arithmetic.
		server, writer, differs := s.Layout.ResetReads(op.Spec, s.Stored, s.Exists, s.Now, after)
		after = server
		if differs {
			st.AfterWriter = &writer
		}
	}
	if !op.To.Delete || s.HasSpec() {
		st.After = &after
	}
	return st, nil
}

// ErrRefused stops a bulk reset when the server refuses writes (see rediserr.Refusal).
var ErrRefused = errors.New("the server refuses writes")

// Run resets ops in pipelined batches of Batch, calling done with each batch's outcomes
// and errors. The batch in flight completes even when ctx ends; a refused write stops Run
// with ErrRefused; a lost round trip returns its error (*bucket.UncertainError once sent).
func Run(ctx context.Context, st *bucket.Store, ops []bucket.ResetOp, done func(ops []bucket.ResetOp, out []bucket.ResetOutcome, err error) error) error {
	for i := 0; i < len(ops); i += Batch {
		batch := ops[i:min(i+Batch, len(ops))]
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
			return ErrRefused
		}
	}
	return nil
}

// Tally counts what resets did, per outcome and, for the buckets reset, per layout; it
// keeps the first keys changed or corrupt, and every batch's error.
type Tally struct {
	Done, Created, Missing, Changed, Failed int
	Corrupt, Undeclared                     int
	ByLayout                                map[string]int
	ChangedKeys, CorruptKeys                []string
	Errs                                    []error
}

// Add counts the outcome o of op.
func (t *Tally) Add(op bucket.ResetOp, o bucket.ResetOutcome) {
	if t.ByLayout == nil {
		t.ByLayout = map[string]int{}
	}
	switch o {
	case bucket.ResetDone:
		t.Done++
		t.ByLayout[op.Layout.Name]++
	case bucket.ResetCreated:
		t.Created++
		t.ByLayout[op.Layout.Name]++
	case bucket.ResetMissing:
		t.Missing++
	case bucket.ResetFailed:
		t.Failed++
	case bucket.ResetCorrupt:
		t.Corrupt++
		t.CorruptKeys = first5(t.CorruptKeys, op.Key)
	case bucket.ResetUndeclared:
		t.Undeclared++
	case bucket.ResetChanged:
		t.Changed++
		t.ChangedKeys = first5(t.ChangedKeys, op.Key)
	}
}

// Reset is how many buckets were reset (or created whole).
func (t *Tally) Reset() int { return t.Done + t.Created }

func first5(keys []string, k string) []string {
	if len(keys) < 5 {
		keys = append(keys, k)
	}
	return keys
}
