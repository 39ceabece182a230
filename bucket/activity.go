package bucket

import (
	"math"
	"time"
)

// Activity is what happened to a bucket between two reads of it, as rates per second.
type Activity struct {
	// Interval is the Redis server time between the two reads.
	Interval time.Duration
	// Counted says Allowed and Denied come from the native decision counters; other
	// layouts keep no counters, so only Consumed is known for them.
	Counted bool
	// Allowed and Denied are decisions per second (native layout only).
	Allowed, Denied float64
	// Consumed is tokens taken per second, derived from the two stored levels in the
	// application's own model (see tokensUsed). Native buckets whose refill reached
	// capacity in between use their counters instead: one token per allowed decision (at
	// least the lower bound), so Allowed and Consumed agree.
	Consumed float64
	// ConsumedKnown is false when the spec is unknown (no refill rate to add back).
	ConsumedKnown bool
}

// DenyRatio is the share of decisions denied (0 when none were counted).
func (a Activity) DenyRatio() float64 {
	if total := a.Allowed + a.Denied; total > 0 {
		return a.Denied / total
	}
	return 0
}

// ActivitySince derives the activity from two reads of the same bucket, prev before cur.
// ok is false when the reads cannot be compared: another key, no time between them, or a
// bucket that is not readable.
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

// tokensUsed is the tokens taken from the bucket between two reads of it, prev before cur,
// computed in the layout's application model at the application's own time of the last
// write (not the server's time of the read). That keeps the figure free of the biases of a
// refill computed on the server's clock: a bucket nobody touched compares equal, also when
// its stored time is ahead of the server's (no phantom use from a fast client's clock), and
// whole-second refill (Spring) counts in the whole seconds the application refills.
//
// The refill a full bucket throws away is not known from two reads: a bucket full at the
// first read and 5 tokens lower at the second may have served 5 requests at the end or 15
// spread over the interval. When the level did not rise, the requests are taken to be spread
// over the interval (a steady load, what watch and top mostly see: exact for any load
// above the refill rate, also from a full bucket); when it rose, the refill is taken to have
// been capped (a lower bound). exact says the refill never reached capacity, so either way
// is exact. A bucket gone (deleted, expired) or raised (reset) counts as nothing used.
func tokensUsed(prev, cur State) (used float64, exact bool) {
	lo, fluid, exact := usedBounds(prev, cur)
	if prev.Exists && cur.Stored.Tokens > prev.Stored.Tokens {
		return lo, exact
	}
	return fluid, exact
}

// usedBounds returns the use assuming the refill was capped at capacity (lo) and assuming it
// never was (fluid), and whether they agree because the refill never reached capacity.
func usedBounds(prev, cur State) (lo, fluid float64, exact bool) {
	if !cur.Exists || (prev.Exists && prev.Stored == cur.Stored) {
		return 0, 0, true
	}
	spec, l := cur.Spec, cur.Layout
	from := prev.Stored
	if !prev.Exists {
		// Created full in between, by a client whose clock is at least cur.Ahead fast.
		from = Level{Tokens: spec.Capacity, TS: prev.Now + cur.Ahead.Microseconds()}
	}
	at := max(prev.Now, cur.Stored.TS)
	actual := l.Level(spec, cur.Stored, at).Tokens
	capped := l.Level(spec, from, at).Tokens
	// The refill from the first read to the last write, as the application counts it.
	free := Spec{Capacity: math.Inf(1), Rate: spec.Rate}
	refill := l.Level(free, from, at).Tokens - l.Level(free, from, prev.Now).Tokens
	uncapped := l.Level(spec, from, prev.Now).Tokens + refill
	return math.Max(0, capped-actual), math.Max(0, uncapped-actual), capped < spec.Capacity
}

// counterDelta is the growth of a counter; a counter that went down was reset (the bucket
// was deleted or expired) and has counted from zero since.
func counterDelta(prev, cur int64) float64 {
	if cur < prev {
		return float64(cur)
	}
	return float64(cur - prev)
}
