package bucket

import (
	"math"
	"time"
)

// upstash: @upstash/ratelimit's tokenBucket (scripts/third_party/upstash/upstash.lua).
func init() {
	register(Layout{Name: "upstash", Type: Hash, TokensField: "tokens", TimeField: "refilledAt", TimeUnit: unitMS,
		model: upstashModel{},
		About: "@upstash/ratelimit tokenBucket: hash @upstash/ratelimit:ID refilledAt/tokens (ms, client clock), " +
			"+rate×interval tokens per whole interval (1 s; a custom layout's interval), PEXPIRE ceil(deficit/refill)×interval"})
}

type upstashModel struct{ ownModel }

// upstashInterval is the refill step in ms and the tokens each step adds (refillRate).
func upstashInterval(l Layout, spec Spec) (ms, refill float64) {
	ms = 1000
	if l.Interval > 0 {
		ms = float64(l.Interval) / float64(time.Millisecond)
	}
	return ms, spec.Rate * (ms / 1000)
}

// Level: n = floor((now - refilledAt) / interval) whole steps of refillRate, in ms.
func (upstashModel) Level(l Layout, spec Spec, stored Level, now int64) Level {
	iv, refill := upstashInterval(l, spec)
	nowMS, at, tok := float64(floorDiv(now, 1000)), float64(stored.TS)/1e3, stored.Tokens
	if nowMS >= at+iv {
		n := math.Floor(float64(nowMS-at) / iv)
		tok = math.Min(spec.Capacity, float64(tok+float64(n*refill)))
		at = float64(at + float64(n*iv))
	}
	return Level{Tokens: tok, TS: int64(math.Round(at * 1e3))}
}

// Allows: a level of 0 is refused; else the integer reply truncates: above -1 passes.
func (upstashModel) Allows(_ Spec, level, cost float64) bool {
	if level == 0 && cost > 0 {
		return false
	}
	return level-cost > -1
}

// ResetTTL: the refill to full, as Upstash's PEXPIRE; at full 1 s.
func (upstashModel) ResetTTL(_ Spec, full time.Duration) time.Duration {
	return max(ceilTo(full, time.Millisecond), time.Second)
}

func (upstashModel) ClientClock() bool { return true }
