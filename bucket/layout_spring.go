package bucket

import (
	"math"
	"time"
)

// spring: the Spring Boot article's script (seed 002, scripts/third_party/apps/spring.lua).
func init() {
	register(Layout{Name: "spring", Type: Hash, TokensField: "tokens", TimeField: "last_refill_time", TimeUnit: unitS,
		model: springModel{},
		About: "Spring Boot script: hash tokens/last_refill_time (whole seconds, Redis TIME), TTL ceil(cap/rate)+60 s"})
}

type springModel struct{ ownModel }

// Level: now = TIME seconds; refill (and clamp) only when now > last_refill_time.
func (springModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	nowS, lastS := float64(floorDiv(now, 1e6)), float64(stored.TS)/1e6
	if nowS > lastS {
		tok := math.Min(spec.Capacity, float64(stored.Tokens+float64(float64(nowS-lastS)*spec.Rate)))
		return Level{Tokens: tok, TS: int64(nowS) * 1e6}
	}
	return stored
}

func (springModel) Step(Layout) time.Duration { return time.Second }

func (springModel) ResetTTL(spec Spec, full time.Duration) time.Duration {
	return max(time.Duration(math.Ceil(spec.Capacity/spec.Rate)+60)*time.Second, ceilTo(full, time.Second))
}
