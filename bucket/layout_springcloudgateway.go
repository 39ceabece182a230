package bucket

import (
	"math"
	"time"
)

// spring-cloud-gateway: scripts/third_party/spring-cloud-gateway/request_rate_limiter.lua.
func init() {
	register(Layout{Name: "spring-cloud-gateway", Type: Strings,
		TokensKey: "request_rate_limiter.*.tokens", TimeKey: "request_rate_limiter.*.timestamp", TimeUnit: unitS,
		model: springCloudGatewayModel{},
		About: "Spring Cloud Gateway RedisRateLimiter: strings request_rate_limiter.{ID}.tokens and .timestamp (whole seconds, Redis TIME), SETEX floor(2·burst/rate) s on both"})
}

type springCloudGatewayModel struct{ ownModel }

// Level: math.min(capacity, last_tokens+(math.max(0, now-last_refreshed)*rate)).
func (springCloudGatewayModel) Level(l Layout, spec Spec, stored Level, now int64) Level {
	u, nowU := l.TimeUnit.perSecond(), unitsAt(l, now)
	delta := math.Max(0, float64(nowU-float64(stored.TS)*u/1e6))
	tok := math.Min(spec.Capacity, float64(stored.Tokens+float64(delta*(spec.Rate/u))))
	return Level{Tokens: tok, TS: int64(math.Round(nowU / u * 1e6))}
}

// ResetTTL: math.floor(fill_time * 2) on both keys.
func (springCloudGatewayModel) ResetTTL(spec Spec, full time.Duration) time.Duration {
	return max(time.Duration(math.Floor(spec.Capacity/spec.Rate*2))*time.Second, ceilTo(full, time.Second))
}

// MissingTime: tonumber(redis.call("get", timestamp_key)) or 0.
func (springCloudGatewayModel) MissingTime(int64) int64 { return 0 }

func unitsAt(l Layout, now int64) float64 {
	u := l.TimeUnit.perSecond()
	if l.FloatTime || u > 1e6 {
		return float64(now) * u / 1e6
	}
	return float64(floorDiv(now, int64(1e6/u)))
}
