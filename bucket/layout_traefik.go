package bucket

import (
	"math"
	"time"
)

// traefik: Traefik v3's Redis rate limiter (scripts/third_party/traefik/traefik.lua).
func init() {
	register(Layout{Name: "traefik", Type: Hash, TokensField: "tokens", TimeField: "last", TimeUnit: unitUS, TimeFirst: true,
		model: traefikModel{},
		About: "Traefik v3 Redis limiter: hash rate:MIDDLEWARE:SOURCE last/tokens (µs, client clock; read by position, last first), " +
			"EXPIRE 2 s (rate >= 1) or 1+int(1/rate) s; serves a deficit it can wait out within its max delay"})
}

type traefikModel struct{ ownModel }

// Level: last = min(last, t); min(tokens + limit * (t - last), burst), limit = rate/1e6 per µs.
func (traefikModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	last := min(stored.TS, now)
	delta := float64(spec.Rate/1e6) * float64(now-last)
	return Level{Tokens: math.Min(float64(stored.Tokens+delta), spec.Capacity), TS: now}
}

// Allows: Traefik serves after a delay when the deficit's wait is within its max delay.
func (traefikModel) Allows(spec Spec, level, cost float64) bool {
	return level-cost >= 0 || traefikDelay(spec, level, cost) <= TraefikMaxDelay(spec.Rate)
}

// AppRetryAfter: X-Retry-In, the wait until level - cost reaches 0.
func (m traefikModel) AppRetryAfter(spec Spec, level, cost float64) (time.Duration, bool) {
	if m.Allows(spec, level, cost) {
		return 0, true
	}
	return traefikDelay(spec, level, cost), true
}

// ResetTTL: ttl = 1, +1 when rate >= 1, else + int(1/rate) (rate_limiter.go), set on every call.
func (traefikModel) ResetTTL(spec Spec, _ time.Duration) time.Duration {
	ttl := 1
	if spec.Rate >= 1 {
		ttl++
	} else if spec.Rate > 0 {
		ttl += int(1 / spec.Rate)
	}
	return time.Duration(ttl) * time.Second
}

func (traefikModel) ClientClock() bool { return true }

// traefikDelay is the script's wait_duration as the middleware reads it (tostring, ns).
func traefikDelay(spec Spec, level, cost float64) time.Duration {
	wait := float64(-(level - cost)) / float64(spec.Rate/1e6)
	return time.Duration(luaNumber(wait) * float64(time.Microsecond))
}

// TraefikMaxDelay is the longest wait Traefik serves a request after, at rate per second.
func TraefikMaxDelay(rate float64) time.Duration {
	if rate < 1 {
		return 500 * time.Millisecond
	}
	return time.Second / (time.Duration(rate) * 2)
}
