package bucket

import "time"

// redis-gcra: rwz/redis-gcra. Capacity is burst, rate rate/period.
func init() {
	register(Layout{Name: "redis-gcra", Type: GCRA, Library: "redis-gcra", Epoch: redisRateEpoch,
		TimeUnit: unitS, FloatTime: true, gcra: redisGCRALib{},
		About: "rwz/redis-gcra: string KEY = TAT, seconds since 2017-01-01 UTC (float), EX ceil(time to full); capacity = burst; " +
			"allows half a token short; its form is redis-rate's too: detection names redis-gcra for a key without rate:"})
}

type redisGCRALib struct{ secondsTAT }

// overdraw: remaining = floor(diff / emission_interval + 0.5) allows down to -0.5.
func (redisGCRALib) overdraw() float64 { return 0.5 }

func (redisGCRALib) decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	return secondsDecide(l, spec, stored, now, cost, true)
}
