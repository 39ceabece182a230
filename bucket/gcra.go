package bucket

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// gcraLib is one GCRA library's arithmetic, followed to the letter. Times are the server's.
type gcraLib interface {
	tatForm
	// ttlRule: at a write, TAT − now lies in (TTL − under, TTL + over].
	ttlRule() (under, over time.Duration)
	// overdraw is how far below empty (in tokens) the library's rounding lets a request go.
	overdraw() float64
	// decide answers a request of cost at now (stored nil: missing); spec and cost are valid.
	decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer
	writeTTL(l Layout, t TAT, now time.Time) time.Duration
}

// registerGCRA registers a gcra preset with its library's arithmetic.
func registerGCRA(lib gcraLib, l Layout) {
	if l.lib() != nil {
		panic("bucket: gcra library " + l.Library + " registered twice")
	}
	l.gcra = lib

	register(l)
}

// lib is the layout's GCRA library, found by Library for a custom layout (nil: none).
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

// TAT is a GCRA bucket's stored theoretical arrival time: when the bucket is full again.
type TAT struct {
	Unix    int64   // Unix nanoseconds
	seconds float64 // as a float-seconds library reads it, since its epoch
}

// Time is the TAT as a time.
func (t TAT) Time() time.Time { return time.Unix(0, t.Unix) }

// parseTAT reads a stored value as the library does, refusing what it could not have written.
func (l Layout) parseTAT(v string) (TAT, error) {
	if lib := l.lib(); lib != nil {
		return lib.parse(l, v)
	}
	return TAT{}, notGCRALayout(l)
}

// nowNanos is the server's now as TIME gives it (microseconds), as nanoseconds.
func nowNanos(now time.Time) int64 { return now.UnixMicro() * 1000 }

// gcraTokens is the level of TAT t at now, clamped to [0, capacity], and how far t lies
// beyond a full window (which no decision with this spec writes), 0 if it does not.
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

// gcraAnswer is the library's answer to one request, as its API returns it (RetryAfter -1:
// none). For a denial, AppRetryAfter is the wait it replies, Wait the true one.
type gcraAnswer struct {
	Allowed             bool
	Remaining           int
	RetryAfter          time.Duration
	ResetAfter          time.Duration
	AppRetryAfter, Wait time.Duration
	Write               bool // the library stores NewTAT with TTL

	NewTAT TAT
	TTL    time.Duration
}

// gcraDecide is the library's answer to a request of cost at now (stored nil: missing).
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

// luaDuration is seconds as a Lua script returns them (tostring, %.14g), truncated to ns.
func luaDuration(f float64) time.Duration {
	g, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 14, 64), 64)
	if g == -1 {
		return -1
	}
	return time.Duration(g * float64(time.Second))
}

// gcraWrite is what a reset writes: SET key Value PX TTL, or a delete for a full bucket.
type gcraWrite struct {
	Delete bool
	Value  string
	TTL    time.Duration
	TAT    TAT
}

// gcraReset is the write that leaves tokens at now, in the library's format and with its
// TTL; the TAT is rounded to the form's resolution towards more tokens.
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
