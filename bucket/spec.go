package bucket

import (
	"fmt"
	"math"
	"time"
)

// Spec is a bucket's shape: Capacity tokens at most, refilled at Rate tokens per second.
type Spec struct {
	Capacity float64 `json:"capacity" yaml:"capacity"`
	Rate     float64 `json:"rate" yaml:"rate"`
}

// IsZero reports whether the spec is unset (take it from the bucket).
func (s Spec) IsZero() bool { return s.Capacity == 0 && s.Rate == 0 }

const (
	maxCapacity = 1e15                       // below 2^53: a level counts single tokens
	maxRefill   = 100 * 365 * 24 * time.Hour // every TTL and wait fits PEXPIRE
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Validate checks the spec alone.
func (s Spec) Validate() error {
	if !finite(s.Capacity) || s.Capacity <= 0 {
		return fmt.Errorf("%w: capacity %v: must be a positive finite number of tokens", ErrInvalid, s.Capacity)
	}
	if !finite(s.Rate) || s.Rate <= 0 {
		return fmt.Errorf("%w: rate %v: must be a positive finite number of tokens per second", ErrInvalid, s.Rate)
	}
	if s.Capacity > maxCapacity {
		return fmt.Errorf("%w: capacity %v: at most %v tokens (beyond that a float no longer counts single tokens)", ErrInvalid, s.Capacity, maxCapacity)
	}
	if s.Capacity/s.Rate > maxRefill.Seconds() {
		return fmt.Errorf("%w: capacity %v at rate %v/s takes longer than 100 years to refill: raise the rate", ErrInvalid, s.Capacity, s.Rate)
	}
	return nil
}

// args are the spec as the native scripts take it: "", "" for the zero spec.
func (s Spec) args() (capacity, rate string) {
	if s.IsZero() {
		return "", ""
	}
	return fmtFloat(s.Capacity), fmtFloat(s.Rate)
}

// ValidateCost checks a cost against the spec: a cost above capacity can never be allowed.
func (s Spec) ValidateCost(cost float64) error {
	if !finite(cost) || cost < 0 {
		return fmt.Errorf("%w: cost %v: must be a finite number >= 0", ErrInvalid, cost)
	}
	if !s.IsZero() && cost > s.Capacity {
		return fmt.Errorf("%w: cost %v exceeds capacity %v: such a request can never be allowed", ErrInvalid, cost, s.Capacity)
	}
	return nil
}

// Result is one decision: RetryAfter until the cost is there (-1: never), ResetAfter until full.
type Result struct {
	Allowed    bool
	Remaining  float64
	RetryAfter time.Duration
	ResetAfter time.Duration
	Spec       Spec
	At         time.Time // the server's time of a native decision; zero where unknown
}

// Level is a bucket's stored level: tokens at time TS (microseconds, Unix epoch).
type Level struct {
	Tokens float64
	TS     int64
}

// At returns the level refilled to now (µs), clamped; a now before TS refills nothing.
func (s Spec) At(l Level, now int64) Level {
	if now > l.TS {
		// float64() keeps the compiler from fusing an FMA, as in the Lua.
		refill := float64(float64(now-l.TS)/1e6) * s.Rate
		return Level{Tokens: math.Min(s.Capacity, float64(l.Tokens+refill)), TS: now}
	}
	return Level{Tokens: math.Min(s.Capacity, l.Tokens), TS: l.TS}
}

// Wait is how long until tokens reach want from have at the spec's rate (0 if already).
func (s Spec) Wait(have, want float64) time.Duration {
	if have >= want {
		return 0
	}
	return time.Duration(math.Ceil((want-have)/s.Rate*1e6)) * time.Microsecond
}

// Take is the reference model of one decision (exists=false: a missing bucket, full).
func (s Spec) Take(l Level, exists bool, now int64, cost float64) (Level, Result) {
	if !exists {
		l = Level{Tokens: s.Capacity, TS: now}
	}
	l = s.At(l, now)
	r := Result{Spec: s, At: time.UnixMicro(l.TS)}
	if l.Tokens >= cost { // never for a cost above capacity: At clamps
		l.Tokens -= cost
		r.Allowed = true
	}
	r.Remaining, r.RetryAfter, r.ResetAfter = l.Tokens, s.Wait(l.Tokens, cost), s.Wait(l.Tokens, s.Capacity)
	if cost > s.Capacity {
		r.RetryAfter = -1
	}
	return l, r
}
