package bucket

import "time"

// throttled: throttled/throttled v2 with store/goredisstore.v9. Capacity is MaxBurst+1.
func init() {
	register(Layout{Name: "throttled", Type: GCRA, Library: "throttled", TimeUnit: unitNS, gcra: throttledLib{},
		About: "throttled/throttled v2 goredisstore: string PREFIX+KEY = TAT, Unix ns (integer), TTL floor(time to full) s, min 1 s; capacity = MaxBurst+1"})
}

type throttledLib struct{ nanosTAT }

// ttlRule: floor(TAT − now) in whole seconds, at least 1 s.
func (throttledLib) ttlRule() (under, over time.Duration) { return time.Second, time.Second }

func (throttledLib) writeTTL(_ Layout, t TAT, now time.Time) time.Duration {
	return throttledTTL(t.Unix - nowNanos(now))
}

func throttledTTL(ns int64) time.Duration {
	return max(time.Second, time.Duration(ns)/time.Second*time.Second)
}

// decide is GCRARateLimiterCtx.RateLimitCtx (one attempt) in Go.
func (throttledLib) decide(_ Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	T, dvt, n, tat := nsStart(spec, stored, now)
	q := int64(cost)
	if q == 0 {
		q = 1 // throttled simulates quantity 1 for cost 0, to compute a RetryAfter
	}
	inc := q * T
	base := max(tat, n)
	newTat := base + inc
	d := gcraAnswer{Allowed: true, RetryAfter: -1}
	var ttl int64
	if diff := n - (newTat - dvt); diff < 0 {
		if inc <= dvt {
			d.RetryAfter = time.Duration(-diff)
			ttl = tat - n
		}
		if cost != 0 {
			d.Allowed = false
		}
	}
	if d.Allowed {
		if cost == 0 {
			newTat = base
		}
		ttl = newTat - n
		d.Write, d.NewTAT, d.TTL = true, TAT{Unix: newTat}, throttledTTL(ttl)
	}
	if next := dvt - ttl; next > -T {
		d.Remaining = int(next / T)
	}
	d.ResetAfter = time.Duration(ttl)
	d.AppRetryAfter, d.Wait = d.RetryAfter, d.RetryAfter
	return d
}
