package bucket

import (
	"math"
	"time"
)

// NativeLayout is what bucketctl's own script writes.
var NativeLayout = Layout{Name: "native", Type: Tagged, TimeUnit: unitUS, Native: true, model: nativeModel{},
	About: "bucketctl's script: string \"" + nativeTag + "\" + last, tokens, ts (µs, Redis TIME), allowed, denied, capacity, rate, expires (packed)"}

// NativeHashLayout is the native layout of earlier versions, converted on first decision.
var NativeHashLayout = Layout{Name: "native-hash", Type: Hash, TokensField: "tokens", TimeField: "ts",
	TimeUnit: unitUS, Native: true, model: nativeModel{},
	About: "bucketctl's earlier layout: hash tokens/ts (µs), capacity, rate, allowed, denied; its first decision converts it to native"}

func init() {
	register(NativeLayout)
	register(NativeHashLayout)
}

// nativeModel is scripts/token_bucket.lua: Redis TIME in µs, max(now, ts), clamped.
type nativeModel struct{ ownModel }

func (nativeModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	return spec.At(stored, now)
}

func (nativeModel) Step(Layout) time.Duration { return time.Microsecond }

// AppRetryAfter: retry_after_us = ceil(((cost - tokens) / rate) * 1000000); -1 when cost > capacity.
func (nativeModel) AppRetryAfter(spec Spec, level, cost float64) (time.Duration, bool) {
	switch deficit := cost - level; {
	case cost > spec.Capacity:
		return -1, true
	case deficit > 0:
		return time.Duration(math.Ceil(float64(deficit/spec.Rate)*1e6)) * time.Microsecond, true
	}
	return 0, true
}

func (nativeModel) ResetTTL(_ Spec, full time.Duration) time.Duration {
	return ceilTo(full, time.Millisecond) + resetGrace
}
