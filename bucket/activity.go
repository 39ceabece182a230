package bucket

import (
	"math"
	"time"
)

// Activity is what happened to a bucket between two reads, per second.
type Activity struct {
	Interval        time.Duration // the server time between the reads
	Counted         bool
	Allowed, Denied float64
	Consumed        float64
	ConsumedKnown   bool
}

// DenyRatio is the share of decisions denied (0 when none were counted).
func (a Activity) DenyRatio() float64 {
	if total := a.Allowed + a.Denied; total > 0 {
		return a.Denied / total
	}
	return 0
}

// ActivitySince derives the activity from two reads of one bucket (ok false: not comparable).
func (cur State) ActivitySince(prev State) (a Activity, ok bool) {
	if prev.Key != cur.Key || cur.Now <= prev.Now || prev.Problem != "" || cur.Problem != "" {
		return Activity{}, false
	}
	a.Interval = time.Duration(cur.Now-prev.Now) * time.Microsecond
	dt := float64(cur.Now-prev.Now) / 1e6
	if cur.Layout.Native && prev.Layout.Native {
		a.Counted = true
		a.Allowed = counterDelta(prev.Allowed, cur.Allowed) / dt
		a.Denied = counterDelta(prev.Denied, cur.Denied) / dt
	}
	if cur.HasSpec() {
		used, exact := tokensUsed(prev, cur)
		if a.Counted && !exact {
			lo, _, _ := usedBounds(prev, cur)
			used = math.Max(lo, counterDelta(prev.Allowed, cur.Allowed))
		}
		a.Consumed, a.ConsumedKnown = used/dt, true
	}
	return a, true
}

// tokensUsed is the tokens taken between two reads; exact says the refill never reached capacity.
func tokensUsed(prev, cur State) (used float64, exact bool) {
	lo, fluid, exact := usedBounds(prev, cur)
	if prev.Exists && cur.Stored.Tokens > prev.Stored.Tokens {
		return lo, exact
	}
	return fluid, exact
}

// usedBounds returns the use with the refill capped (lo) and uncapped (fluid).
func usedBounds(prev, cur State) (lo, fluid float64, exact bool) {
	if !cur.Exists || (prev.Exists && prev.Stored == cur.Stored) {
		return 0, 0, true
	}
	spec, l := cur.Spec, cur.Layout
	from := prev.Stored
	if !prev.Exists {
		from = Level{Tokens: spec.Capacity, TS: prev.Now + cur.Ahead.Microseconds()}
	}
	at := max(prev.Now, cur.Stored.TS)
	actual := l.Level(spec, cur.Stored, at).Tokens
	capped := l.Level(spec, from, at).Tokens
	free := Spec{Capacity: math.Inf(1), Rate: spec.Rate}
	refill := l.Level(free, from, at).Tokens - l.Level(free, from, prev.Now).Tokens
	uncapped := l.Level(spec, from, prev.Now).Tokens + refill
	return math.Max(0, capped-actual), math.Max(0, uncapped-actual), capped < spec.Capacity
}

func counterDelta(prev, cur int64) float64 {
	if cur < prev {
		return float64(cur)
	}
	return float64(cur - prev)
}
