package bucket

import (
	"math"
	"time"
)

// redis-cell: brandur/redis-cell's CL.THROTTLE. Capacity is max_burst+1, rate count/period.
func init() {
	register(Layout{Name: "redis-cell", Type: GCRA, Library: "redis-cell", TimeUnit: unitNS, gcra: redisCellLib{},
		About: "brandur/redis-cell CL.THROTTLE: string KEY = TAT, Unix ns (integer), PX time to full (ms, truncated); capacity = max_burst+1; " +
			"its form is throttled's too: an undeclared one reads as a throttled guess"})
}

type redisCellLib struct{ nanosTAT }

// ttlRule: PX whole milliseconds of TAT − now, truncated (a reset writes at least 1 ms).
func (redisCellLib) ttlRule() (under, over time.Duration) { return time.Millisecond, time.Millisecond }

func (redisCellLib) writeTTL(_ Layout, t TAT, now time.Time) time.Duration {
	return max(time.Millisecond, time.Duration(t.Unix-nowNanos(now)).Truncate(time.Millisecond))
}

// decide is RateLimiter::rate_limit (mod.rs, one attempt) and CL.THROTTLE's reply in Go.
func (redisCellLib) decide(_ Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	T, dvt, n, tat := nsStart(spec, stored, now)
	inc := T * int64(cost)
	newTat := max(tat, n) + inc
	d := gcraAnswer{RetryAfter: -1}
	var ttl int64
	if diff := n - (newTat - dvt); diff < 0 {
		if inc <= dvt {
			d.RetryAfter = time.Duration(-diff)
		}
		ttl = tat - n
	} else {
		ttl = newTat - n
		d.Allowed, d.Write, d.NewTAT = true, true, TAT{Unix: newTat}
		d.TTL = time.Duration(ttl).Truncate(time.Millisecond)
	}
	if next := dvt - ttl; next > -T {
		d.Remaining = int(rustAsI64(float64(next/1000) / float64(T/1000)))
	}
	d.ResetAfter = time.Duration(ttl)
	d.Wait, d.AppRetryAfter = d.RetryAfter, cellSeconds(d.RetryAfter)
	return d
}

// cellSeconds is a duration as CL.THROTTLE replies it: seconds, rounded up from 1 ms on.
func cellSeconds(d time.Duration) time.Duration {
	if d == -1 {
		return -1
	}
	s := int64(d.Seconds())
	if (d%time.Second)/time.Millisecond > 0 {
		s++
	}
	return time.Duration(s) * time.Second
}

// rustAsI64 is Rust's f64 as i64: truncated, saturating, NaN 0.
func rustAsI64(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
