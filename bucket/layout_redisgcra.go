package bucket

import (
	"math"
	"time"
)

// redis-gcra: rwz/redis-gcra, a Ruby gem's Lua script (scripts/third_party/redis-gcra).
// The key is named as its caller gives it and holds the TAT as seconds since 2017-01-01
// UTC, a Lua double, set with EX ceil(TAT − now): redis_rate's form and TTL, so without
// rate:'s prefix detection guesses redis-gcra first. Capacity is burst, rate rate/period;
// it rounds the remaining tokens to nearest, so it allows a request half a token short.
func init() {
	registerGCRA(redisGCRALib{}, Layout{Name: "redis-gcra", Type: GCRA, Library: "redis-gcra", Epoch: redisRateEpoch,
		TimeUnit: unitS, FloatTime: true, model: ownModel{},
		About: "rwz/redis-gcra: string KEY = TAT, seconds since 2017-01-01 UTC (float), EX ceil(time to full); capacity = burst; " +
			"allows half a token short; its form is redis-rate's too: detection names redis-gcra for a key without rate:"})
}

type redisGCRALib struct{ secondsTAT }

func (redisGCRALib) ttlRule() (under, over time.Duration) { return time.Second, 0 }

// overdraw: remaining = floor(diff / emission_interval + 0.5) allows down to -0.5.
func (redisGCRALib) overdraw() float64 { return 0.5 }

func (redisGCRALib) writeTTL(l Layout, t TAT, now time.Time) time.Duration {
	return ceilSecondsTTL(l, t, now)
}

// decide is perform_gcra_ratelimit.lua in Go, operation for operation in doubles, and the
// gem's Result: retry_after and reset_after through Lua's tostring. Wait is the true wait,
// half an interval shorter than the reply (the rounding allows then). An allowed request
// always SETs, with EX ceil(reset_after): cost 0 on a full bucket is EX 0, an error of the
// script, and writes nothing.
func (redisGCRALib) decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	T := 1 / spec.Rate
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
	remaining := math.Floor(float64(diff/T) + 0.5)
	if remaining < 0 {
		ra := luaDuration(-diff)
		wait := time.Duration(math.Ceil(float64(-diff-T/2) * 1e9))
		return gcraAnswer{RetryAfter: ra, AppRetryAfter: ra, Wait: wait, ResetAfter: luaDuration(tat - nowS)}
	}
	d := gcraAnswer{Allowed: true, Remaining: int(remaining), RetryAfter: -1}
	resetAfter := float64(newTat - nowS)
	d.ResetAfter = luaDuration(resetAfter)
	if ex := math.Ceil(resetAfter); ex > 0 {
		d.Write, d.NewTAT, d.TTL = true, TAT{seconds: newTat, Unix: l.unixOf(newTat)}, time.Duration(ex)*time.Second
	}
	return d
}
