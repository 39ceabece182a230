package bucket

import (
	"math"
	"time"
)

// express: the Node/Express middleware (seed 004, scripts/third_party/apps/express.lua).
func init() {
	register(Layout{Name: "express", Type: Hash, TokensField: "tokens", TimeField: "last_refill", TimeUnit: unitS, FloatTime: true,
		model: expressModel{},
		About: "Node/Express middleware: hash tokens/last_refill (seconds, float), TTL ceil(2·cap/rate) s"})
}

type expressModel struct{ ownModel }

// Level reads the clock as Date.now() / 1000: whole milliseconds.
func (expressModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	return clientSecondsLevel(spec, stored, now, float64(floorDiv(now, 1000))/1e3)
}

func (expressModel) Step(Layout) time.Duration { return time.Millisecond }

// AppRetryAfter: (cost - tokens) / refill_rate, truncated to whole seconds by Redis.
func (expressModel) AppRetryAfter(spec Spec, level, cost float64) (time.Duration, bool) {
	if level >= cost {
		return 0, true
	}
	return time.Duration(math.Trunc((cost-level)/spec.Rate)) * time.Second, true
}

func (expressModel) ResetTTL(spec Spec, full time.Duration) time.Duration {
	return max(time.Duration(math.Ceil(2*spec.Capacity/spec.Rate))*time.Second, ceilTo(full, time.Second))
}

func (expressModel) ClientClock() bool { return true }
