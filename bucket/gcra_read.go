package bucket

import (
	"fmt"
	"strings"
	"time"
)

// GCRAFit says how well a stored string fits a gcra layout.
type GCRAFit int

const (
	// NotGCRA: the value cannot be a bucket of the layout (not a number in the library's
	// form, or out of its range). It is never written or deleted as one.
	NotGCRA GCRAFit = iota
	// MaybeGCRA: a number of the right form and magnitude, but the key or its TTL is not
	// what the library leaves (outside the library's key prefix, no TTL, or a TTL that does
	// not match the TAT). A plain number is ambiguous: a counter or a timestamp of another
	// application can look like a TAT, so such a key is a bucket only through a rule or
	// --layout.
	MaybeGCRA
	// SureGCRA: the right form and magnitude, the library's key prefix, and a TTL that
	// matches the TAT the way the library sets it. Detected without a rule.
	SureGCRA
)

func (f GCRAFit) String() string {
	switch f {
	case SureGCRA:
		return "sure"
	case MaybeGCRA:
		return "maybe"
	}
	return "no"
}

// gcraTTLSlack absorbs PTTL's millisecond rounding and the time between the TIME and PTTL
// replies of one pipeline.
const gcraTTLSlack = 100 * time.Millisecond

// GCRAShape checks whether the string value at key, with its PTTL (-1: none), can be a
// bucket of this gcra layout at now (the server's time), and says why not.
//
// The libraries tie the TTL to the TAT: redis_rate sets EX ceil(TAT − now), so
// TAT − now lies in (PTTL − 1 s, PTTL]; throttled sets floor(TAT − now) s, at least 1 s,
// so TAT − now lies in (PTTL − 1 s, PTTL + 1 s). Both keep this as time passes. A value
// that also meets this (and carries the library's key prefix) is SureGCRA.
func (l Layout) GCRAShape(key, value string, pttl time.Duration, now time.Time) (GCRAFit, string) {
	if l.Type != GCRA {
		return NotGCRA, fmt.Sprintf("layout %s does not store GCRA buckets", l.Name)
	}
	t, err := l.ParseTAT(value)
	if err != nil {
		return NotGCRA, err.Error()
	}
	if l.KeyPrefix != "" && !strings.HasPrefix(key, l.KeyPrefix) {
		return MaybeGCRA, fmt.Sprintf("the key does not start with %s's prefix %q", l.Library, l.KeyPrefix)
	}
	if pttl < 0 {
		return MaybeGCRA, fmt.Sprintf("the key has no TTL, and %s always sets one", l.Library)
	}
	ahead := time.Duration(t.Unix - nowNanos(now))
	lo, hi := pttl-time.Second-gcraTTLSlack, pttl+gcraTTLSlack
	if l.Library == LibThrottled {
		hi += time.Second
	}
	if ahead <= lo || ahead > hi {
		return MaybeGCRA, fmt.Sprintf("the TAT is %s from now but the TTL is %s, and %s sets the TTL to the time until full",
			ahead.Round(time.Millisecond), pttl, l.Library)
	}
	return SureGCRA, ""
}

// GCRALayouts are the gcra presets, in the order detection tries them.
func GCRALayouts() []Layout { return []Layout{Presets["redis-rate"], Presets["throttled"]} }

// DetectGCRA finds the gcra preset a string value fits best. The magnitudes of the two
// libraries' numbers (seconds since 2017 below 2^32; Unix nanoseconds from 1e18) never
// overlap, so at most one preset fits; fit is NotGCRA when none does, and MaybeGCRA means
// the value needs a rule to be read as that layout's bucket.
func DetectGCRA(key, value string, pttl time.Duration, now time.Time) (Layout, GCRAFit, string) {
	reasons := make([]string, 0, 2)
	for _, l := range GCRALayouts() {
		fit, why := l.GCRAShape(key, value, pttl, now)
		if fit != NotGCRA {
			return l, fit, why
		}
		reasons = append(reasons, l.Name+": "+why)
	}
	return Layout{}, NotGCRA, strings.Join(reasons, "; ")
}

// GCRAReading is one gcra bucket as read: what bucket.State needs.
type GCRAReading struct {
	// Exists is false for a missing key: a full bucket in both libraries.
	Exists bool
	// TAT is the stored theoretical arrival time (zero when missing).
	TAT TAT
	// Fit and Reason: how the value fits the layout (SureGCRA for a missing key).
	Fit    GCRAFit
	Reason string
	// Tokens is the level at now, clamped to [0, capacity] (only with a spec).
	Tokens float64
	// Ahead is how far the TAT lies beyond a full window (only with a spec): the stored
	// time is ahead of what the server's clock allows, and Tokens was clamped at 0.
	Ahead time.Duration
	// TTL is the key's PTTL: -1 none, -2 missing.
	TTL time.Duration
}

// AheadOfServer reports whether the stored TAT is beyond anything the library could
// have written with the server's clock and this spec.
func (r GCRAReading) AheadOfServer() bool { return r.Ahead > 0 }

// GCRAState reads one gcra bucket from its raw GET reply (exists false when GET returned
// nil) and PTTL at now, the server's time. A value that is not a bucket of the layout
// comes back with Fit NotGCRA and the Reason; the error is for a layout or spec that is
// not valid.
func GCRAState(l Layout, spec Spec, key, value string, exists bool, pttl time.Duration, now time.Time) (GCRAReading, error) {
	if l.Type != GCRA {
		return GCRAReading{}, fmt.Errorf("%w: layout %q is not a gcra layout", ErrInvalid, l.Name)
	}
	if err := l.Validate(); err != nil {
		return GCRAReading{}, err
	}
	if !spec.IsZero() {
		if err := spec.Validate(); err != nil {
			return GCRAReading{}, err
		}
	}
	r := GCRAReading{Exists: exists, TTL: pttl}
	if !exists {
		r.Fit, r.TTL, r.Tokens = SureGCRA, -2, spec.Capacity
		return r, nil
	}
	r.Fit, r.Reason = l.GCRAShape(key, value, pttl, now)
	if r.Fit == NotGCRA {
		return r, nil
	}
	r.TAT, _ = l.ParseTAT(value)
	if !spec.IsZero() {
		r.Tokens, r.Ahead = l.GCRATokens(spec, r.TAT, now)
	}
	return r, nil
}
