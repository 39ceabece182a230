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
	// Consumed is tokens taken per second, derived from the level and the refill:
	// min(capacity, prev + rate·dt) − now, at least 0. It is a lower bound: refill lost
	// while the bucket sat full within the interval hides some consumption.
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

// ActivityBetween derives the activity from two reads of the same bucket, prev before cur.
// ok is false when the reads cannot be compared: another key, no time between them, or a
// bucket that is not readable.
func ActivityBetween(prev, cur State) (a Activity, ok bool) {
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
		// A bucket that did not exist reads as full, so a bucket created in between
		// compares correctly; one reset or expired in between may show no consumption.
		consumed := math.Min(cur.Spec.Capacity, prev.Tokens+cur.Spec.Rate*dt) - cur.Tokens
		a.Consumed, a.ConsumedKnown = math.Max(0, consumed)/dt, true
	}
	return a, true
}

// counterDelta is the growth of a counter; a counter that went down was reset (the bucket
// was deleted or expired) and has counted from zero since.
func counterDelta(prev, cur int64) float64 {
	if cur < prev {
		return float64(cur)
	}
	return float64(cur - prev)
}
