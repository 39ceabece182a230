package bucket

// GCRA layouts store a bucket as one theoretical arrival time (TAT), when it is full again:
// the level at now is C − (TAT − now) × R, clamped to [0, C]; a missing key is full. Each
// library's arithmetic is a gcraLib in its layout's file, followed to the letter;
// gcra_forms.go holds the two ways they store a TAT. All take now from the server's
// clock, so the now passed here must be the server's time too.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// gcraLib is one GCRA library's arithmetic. Its key prefix is its preset's KeyPrefix.
type gcraLib interface {
	tatForm
	// ttlRule is how the library ties a key's TTL to the TAT it writes: at the write,
	// TAT − now lies in (TTL − under, TTL + over].
	ttlRule() (under, over time.Duration)
	// overdraw is how far below empty (in tokens) a request the library allows may leave
	// the bucket: its rounding of what remains (0 for most).
	overdraw() float64
	// decide is the library's answer to a request of cost at now (stored nil: missing),
	// with spec and cost already checked.
	decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer
	// writeTTL is the TTL the library sets with the TAT t written at now.
	writeTTL(l Layout, t TAT, now time.Time) time.Duration
}

// registerGCRA registers a gcra preset with its library's arithmetic.
func registerGCRA(lib gcraLib, l Layout) {
	for _, p := range presets() {
		if p.gcra != nil && p.Library == l.Library {
			panic("bucket: gcra library " + l.Library + " registered twice")
		}
	}
	l.gcra = lib
	register(l)
}

// lib is the layout's GCRA library: its preset's, or for a custom layout that of the
// preset of its Library (nil when it names none).
func (l Layout) lib() gcraLib {
	if l.Type != GCRA {
		return nil
	}
	if l.gcra != nil {
		return l.gcra
	}
	for _, p := range presets() {
		if p.gcra != nil && p.Library == l.Library {
			return p.gcra
		}
	}
	return nil
}

func gcraLibNames() string {
	var names []string
	for _, p := range presets() {
		if p.gcra != nil {
			names = append(names, p.Library)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// validateGCRA checks that a gcra layout names a library and that library's number format.
func (l Layout) validateGCRA() error {
	lib := l.lib()
	if lib == nil {
		return fmt.Errorf("%w: layout %q: library %q must be one of %s", ErrInvalid, l.Name, l.Library, gcraLibNames())
	}
	return lib.validate(l)
}

func notGCRALayout(l Layout) error {
	return fmt.Errorf("%w: layout %q is not a gcra layout", ErrInvalid, l.Name)
}

// TAT is a GCRA bucket's stored theoretical arrival time (State.TAT): the time at which
// the bucket is full again. A TAT of float seconds also keeps the exact double the library reads.
type TAT struct {
	// Unix is the TAT in Unix nanoseconds.
	Unix int64
	// seconds is the value as a float-seconds library reads it (seconds since its epoch).
	seconds float64
}

// Time is the TAT as a time.
func (t TAT) Time() time.Time { return time.Unix(0, t.Unix) }

// parseTAT reads a stored value of a gcra layout the way the library reads it, and
// refuses what the library cannot use or could not have written.
func (l Layout) parseTAT(v string) (TAT, error) {
	if lib := l.lib(); lib != nil {
		return lib.parse(l, v)
	}
	return TAT{}, notGCRALayout(l)
}

// nowNanos is the server's now as TIME gives it (microseconds), as nanoseconds.
func nowNanos(now time.Time) int64 { return now.UnixMicro() * 1000 }

// gcraTokens is the level of a bucket with the stored TAT at now: capacity − (TAT − now)
// × rate, clamped to [0, capacity]. ahead is how far the TAT lies beyond a full window
// (capacity/rate from now, and the library's overdraw), which no decision of the library
// with this spec can write: it means a lowered capacity, a clock that ran backwards, or
// another writer; 0 otherwise.
func (l Layout) gcraTokens(spec Spec, t TAT, now time.Time) (tokens float64, ahead time.Duration) {
	lib := l.lib()
	if lib == nil {
		return 0, 0
	}
	tokens, past := lib.tokens(l, spec, t, now)
	if o := lib.overdraw(); o > 0 {
		past -= time.Duration(math.Round(o / spec.Rate * 1e9))
	}
	return tokens, max(0, past)
}

// gcraAnswer is what the library answers to one request of cost at now, as its API
// returns it; the exact level is gcraTokens. Remaining is what the library reports (each
// library rounds it its own way); RetryAfter and ResetAfter are the library's durations,
// RetryAfter -1 for none; AppRetryAfter is the retry-after the library replies to its
// caller (the same, or rounded as it replies it) and Wait the true wait until the cost is
// allowed (the same, or shorter where the library's rounding allows earlier).
type gcraAnswer struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration
	ResetAfter time.Duration
	// AppRetryAfter and Wait: see above (only for a denied request).
	AppRetryAfter, Wait time.Duration
	// Write says the library stores NewTAT with TTL after this request.
	Write  bool
	NewTAT TAT
	TTL    time.Duration
}

// gcraDecide computes the library's answer to a request of cost at now for the stored
// TAT (nil: the key is missing), with the library's own arithmetic and rounding.
func (l Layout) gcraDecide(spec Spec, stored *TAT, now time.Time, cost int) (gcraAnswer, error) {
	if err := spec.Validate(); err != nil {
		return gcraAnswer{}, err
	}
	if cost < 0 {
		return gcraAnswer{}, fmt.Errorf("%w: cost %d must be >= 0", ErrInvalid, cost)
	}
	lib := l.lib()
	if lib == nil {
		return gcraAnswer{}, notGCRALayout(l)
	}
	return lib.decide(l, spec, stored, now, cost), nil
}

// luaDuration is a duration as a Lua script returns it: tostring (%.14g), parsed as a
// float, and time.Duration(f × 1e9) truncated; -1 stays -1.
func luaDuration(f float64) time.Duration {
	g, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 14, 64), 64)
	if g == -1 {
		return -1
	}
	return time.Duration(g * float64(time.Second))
}

// gcraWrite is what a reset writes to leave a level: SET key Value PX TTL, or a delete.
type gcraWrite struct {
	// Delete: the level is a full bucket, which every library reads from a missing key
	// (none stores a full bucket: a TTL of 0 is not a TTL).
	Delete bool
	Value  string
	TTL    time.Duration
	TAT    TAT
}

// gcraReset is the write that leaves exactly tokens at now (the server's time) in the
// library's number format, with the TTL the library itself would set. The TAT is rounded
// to the form's resolution towards more tokens (float seconds: microseconds, so at most
// 1 µs of refill more; integer nanoseconds: 1 ns), so the library allows exactly the
// requests of cost 1 its own rounding allows at tokens right after the write.
func (l Layout) gcraReset(spec Spec, tokens float64, now time.Time) (gcraWrite, error) {
	if err := spec.Validate(); err != nil {
		return gcraWrite{}, err
	}
	if !finite(tokens) || tokens < 0 || tokens > spec.Capacity {
		return gcraWrite{}, fmt.Errorf("%w: tokens %v: must be between 0 and the capacity %v", ErrInvalid, tokens, spec.Capacity)
	}
	lib := l.lib()
	if lib == nil {
		return gcraWrite{}, notGCRALayout(l)
	}
	v, t, full, err := lib.resetTAT(l, spec, tokens, now)
	switch {
	case err != nil:
		return gcraWrite{}, err
	case full:
		return gcraWrite{Delete: true}, nil
	}
	return gcraWrite{Value: v, TAT: t, TTL: lib.writeTTL(l, t, now)}, nil
}
