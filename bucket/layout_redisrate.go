package bucket

import (
	"math"
	"time"
)

// redis-rate: go-redis/redis_rate v10. String rate:KEY holding the TAT as seconds since
// 2017-01-01 UTC, a Lua double the server renders as a decimal, set with EX ceil(TAT −
// now). Capacity is the Limit's Burst, rate Rate/Period; its Lua script computes in
// doubles with the emission interval Period/Rate.
func init() {
	registerGCRA(redisRateLib{}, Layout{Name: "redis-rate", Type: GCRA, Library: "redis_rate", KeyPrefix: "rate:",
		Epoch: redisRateEpoch, TimeUnit: unitS, FloatTime: true, model: ownModel{},
		About: "go-redis/redis_rate v10: string rate:KEY = TAT, seconds since 2017-01-01 UTC (float), EX ceil(time to full); capacity = Burst"})
}

// redisRateEpoch is redis_rate's jan_1_2017: 2017-01-01T00:00:00Z in Unix seconds.
const redisRateEpoch = 1483228800

type redisRateLib struct{ secondsTAT }

// ttlRule: EX ceil(TAT − now).
func (redisRateLib) ttlRule() (under, over time.Duration) { return time.Second, 0 }

func (redisRateLib) overdraw() float64 { return 0 }

func (redisRateLib) writeTTL(l Layout, t TAT, now time.Time) time.Duration {
	return ceilSecondsTTL(l, t, now)
}

// decide is redis_rate's allowN script in Go, operation for operation in doubles; the
// Go API's answer: Remaining truncated, durations through Lua's tostring (14 significant
// digits) then truncated to ns, RetryAfter -1 when allowed; a cost above capacity is denied
// with a finite RetryAfter although it never succeeds; cost 0 re-sets a bucket that is not
// full. float64() conversions keep the compiler from fusing multiply-adds.
func (redisRateLib) decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	T := 1 / spec.Rate
	nowS := luaNow(now, l.Epoch)
	tat := nowS
	if stored != nil {
		tat = stored.seconds
	}
	tat = math.Max(tat, nowS)
	increment := float64(T * float64(cost))
	burstOffset := float64(T * spec.Capacity)
	newTat := float64(tat + increment)
	allowAt := float64(newTat - burstOffset)
	diff := float64(nowS - allowAt)
	remaining := float64(diff / T)
	if remaining < 0 {
		ra := luaDuration(-diff)
		return gcraAnswer{RetryAfter: ra, AppRetryAfter: ra, Wait: ra, ResetAfter: luaDuration(tat - nowS)}
	}
	d := gcraAnswer{Allowed: true, Remaining: int(remaining), RetryAfter: -1}
	resetAfter := float64(newTat - nowS)
	d.ResetAfter = luaDuration(resetAfter)
	if resetAfter > 0 {
		d.Write = true
		d.NewTAT = TAT{seconds: newTat, Unix: l.unixOf(newTat)}
		d.TTL = time.Duration(math.Ceil(resetAfter)) * time.Second
	}
	return d
}
