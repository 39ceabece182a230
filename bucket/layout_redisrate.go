package bucket

import (
	"math"
	"time"
)

// redis-rate: go-redis/redis_rate v10. Capacity is the Limit's Burst, rate Rate/Period.
func init() {
	register(Layout{Name: "redis-rate", Type: GCRA, Library: "redis_rate", KeyPrefix: "rate:",
		Epoch: redisRateEpoch, TimeUnit: unitS, FloatTime: true, gcra: redisRateLib{},
		About: "go-redis/redis_rate v10: string rate:KEY = TAT, seconds since 2017-01-01 UTC (float), EX ceil(time to full); capacity = Burst"})
}

const redisRateEpoch = 1483228800 // redis_rate's jan_1_2017

type redisRateLib struct{ secondsTAT }

func (redisRateLib) decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	return secondsDecide(l, spec, stored, now, cost, false)
}

// secondsDecide is redis_rate's allowN script (half false) or redis-gcra's (half true)
// in Go, operation for operation in doubles (float64() stops fused multiply-adds).
func secondsDecide(l Layout, spec Spec, stored *TAT, now time.Time, cost int, half bool) gcraAnswer {
	T := emission(spec.Rate)
	nowS := luaNow(now, l.Epoch)
	tat := nowS
	if stored != nil {
		tat = stored.seconds
	}
	increment := float64(T * float64(cost))
	burstOffset := float64(T * spec.Capacity)
	newTat := float64(math.Max(tat, nowS) + increment)
	allowAt := float64(newTat - burstOffset)
	diff := float64(nowS - allowAt)
	remaining, wait := float64(diff/T), luaDuration(-diff)
	if half {
		remaining = math.Floor(float64(diff/T) + 0.5)
		wait = time.Duration(math.Ceil(float64(-diff-T/2) * 1e9)) // the rounding allows it then
	} else {
		tat = math.Max(tat, nowS)
	}
	if remaining < 0 {
		ra := luaDuration(-diff)
		return gcraAnswer{RetryAfter: ra, AppRetryAfter: ra, Wait: wait, ResetAfter: luaDuration(tat - nowS)}
	}
	d := gcraAnswer{Allowed: true, Remaining: int(remaining), RetryAfter: -1}
	resetAfter := float64(newTat - nowS)
	d.ResetAfter = luaDuration(resetAfter)
	if resetAfter > 0 {
		d.Write, d.NewTAT, d.TTL = true, TAT{seconds: newTat, Unix: l.unixOf(newTat)}, time.Duration(math.Ceil(resetAfter))*time.Second
	}
	return d
}
