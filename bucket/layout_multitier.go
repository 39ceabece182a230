package bucket

import (
	"math"
	"time"
)

// multi-tier: the Python multi-tier design (seed 003, scripts/third_party/apps/multi-tier.lua).
func init() {
	register(Layout{Name: "multi-tier", Type: Hash, TokensField: "tokens", TimeField: "last_refill_at", TimeUnit: unitS, FloatTime: true,
		model: multiTierModel{},
		About: "Python multi-tier design: hash tokens/last_refill_at (seconds, float), TTL ceil(2·burst/rate) s"})
}

type multiTierModel struct{ ownModel }

// Level: elapsed = max(0, now - last); min(capacity, tokens + elapsed * rate); writes now.
func (multiTierModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	return clientSecondsLevel(spec, stored, now, secondsOf(now))
}

func (multiTierModel) AppRetryAfter(spec Spec, level, cost float64) (time.Duration, bool) {
	return msRetry(spec, level, cost), true
}

func (multiTierModel) ResetTTL(spec Spec, full time.Duration) time.Duration {
	return max(time.Duration(math.Ceil(spec.Capacity/spec.Rate*2))*time.Second, ceilTo(full, time.Second))
}

func (multiTierModel) ClientClock() bool { return true }

// clientSecondsLevel refills from the stored float seconds to nowS, never backwards.
func clientSecondsLevel(spec Spec, stored Level, now int64, nowS float64) Level {
	elapsed := math.Max(0, float64(nowS-secondsOf(stored.TS)))
	return Level{Tokens: math.Min(spec.Capacity, float64(stored.Tokens+float64(elapsed*spec.Rate))), TS: now}
}
