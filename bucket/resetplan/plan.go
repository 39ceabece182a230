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
	SetTokens bool // write Tokens instead of deleting the bucket's keys
	Tokens    float64
	Spec      bucket.Spec // the spec given (zero: none), written over a native bucket's own
}

// Step is the reset of one bucket as planned.
type Step struct {
	Op     bucket.ResetOp
	Needed bool // false: no key, and a refill (already full)
	// The tokens before, and after as its application reads them on the server's clock and
	// (when it differs) on that of a writer ahead; nil: unknown.
	Before, After, AfterWriter *float64
	Ahead                      time.Duration
	Respec                     bool // Settings.Spec written over StoredSpec
	StoredSpec                 bucket.Spec
}

// For plans the reset of s; it fails as State.ResetOp does, with bucket.ErrNoSpec for tokens
// without a spec, or with the op's validation error.
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
		// Another spec given: written on purpose (refilled to the new capacity without tokens).
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

// ErrRefused stops a bulk reset when the server refuses writes.
var ErrRefused = errors.New("the server refuses writes")

// Run resets ops in batches of Batch, calling done with each batch's outcomes; the batch in
// flight completes when ctx ends, a refused write stops it (ErrRefused).
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

// Tally counts what resets did, per outcome and layout, with the first keys changed or
// corrupt and every batch's error.
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
