package consume

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Outcome is a decision with the layout the key was read as and whether it exists.
type Outcome struct {
	bucket.Decision
	Layout string
	Exists bool
	State  *bucket.State // the bucket as read (nil when the script decided)
}

// WriteFailed is a consume whose write failed; Err is a *bucket.KeyError.
type WriteFailed struct{ Err error }

func (e *WriteFailed) Error() string { return e.Err.Error() }
func (e *WriteFailed) Unwrap() error { return e.Err }

// Decide decides for key with target t: a check when peek, else a consume.
func Decide(ctx context.Context, st *bucket.Store, key string, t bucket.Target, peek bool) (Outcome, error) {
	never := !t.Spec.IsZero() && t.Cost > t.Spec.Capacity // denied unwritten: a read decides
	if peek || never {
		return Read(ctx, st, key, t, peek)
	}
	res, err := st.Take(ctx, key, t.Spec, t.Cost)
	if err == nil {
		return Outcome{Decision: bucket.Decision{Result: res}, Layout: bucket.NativeLayout.Name, Exists: true}, nil
	}
	if errors.Is(err, bucket.ErrWrongType) || errors.Is(err, bucket.ErrForeign) {
		// A read names what the script refused.
		if _, rerr := Read(ctx, st, key, t, false); rerr != nil && !rediserr.IsUnreachable(rerr) {
			return Outcome{}, rerr
		}
	}
	return Outcome{}, &WriteFailed{Err: &bucket.KeyError{Key: key, Err: err}}
}

// Read decides the way the bucket's application does; a consume (peek false) refuses what
// the native script would: another layout, another spec.
func Read(ctx context.Context, st *bucket.Store, key string, t bucket.Target, peek bool) (Outcome, error) {
	states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return t })
	if err != nil {
		return Outcome{}, err
	}
	s := states[0]
	if s.Problem != "" {
		return Outcome{Exists: true}, s.NotBucketError()
	}
	if !peek && !s.Layout.Native {
		what := fmt.Sprintf("a bucket of layout %s: consume works on native buckets only; use inspect, check or reset", s.Layout.Name)
		if s.Guess != "" { // not proven to be a bucket at all: not said to be another one's
			what = fmt.Sprintf("read as layout %s only by a guess (%s): consume works on native buckets only",
				s.Layout.Name, strings.TrimPrefix(s.Guess, "a guess: "))
		}
		return Outcome{Exists: true}, fmt.Errorf("%w: %q is %s", bucket.ErrForeign, key, what)
	}
	if !peek && s.Exists && !t.Spec.IsZero() && t.Spec != s.Spec {
		return Outcome{Exists: true}, &bucket.SpecDiffersError{Key: key, Stored: s.Spec}
	}
	if _, err := s.Peek(t.Cost); err != nil {
		return Outcome{Exists: s.Exists}, err
	}
	return Outcome{Decision: s.Decide(t.Cost), Layout: s.Layout.Name, Exists: s.Exists, State: &s}, nil
}
