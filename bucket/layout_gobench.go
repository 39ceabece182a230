package bucket

import (
	"math"
	"time"
)

// go-bench: the Go benchmark limiter (seed 001, scripts/third_party/apps/go-bench.lua).
func init() {
	register(Layout{Name: "go-bench", Type: Hash, TokensField: "tokens", TimeField: "ts", TimeUnit: unitMS,
		model: goBenchModel{},
		About: "Go benchmark limiter: hash tokens/ts (ms, client clock), PEXPIRE from the caller"})
}

type goBenchModel struct{ ownModel }

// Level: delta = max(0, now - ts) in ms; min(burst, tokens + (delta / 1000.0) * rate).
func (goBenchModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	nowMS, tsMS := float64(floorDiv(now, 1000)), float64(stored.TS)/1e3
	delta := math.Max(0, float64(nowMS-tsMS))
	tok := math.Min(spec.Capacity, float64(stored.Tokens+float64(float64(delta/1000)*spec.Rate)))
	return Level{Tokens: tok, TS: int64(math.Round(math.Max(nowMS, tsMS) * 1e3))}
}

func (goBenchModel) Step(Layout) time.Duration { return time.Millisecond }

// AppRetryAfter: retry_after_ms = math.ceil((need / rate) * 1000).
func (goBenchModel) AppRetryAfter(spec Spec, level, cost float64) (time.Duration, bool) {
	return msRetry(spec, level, cost), true
}

func (goBenchModel) ClientClock() bool { return true }

func msRetry(spec Spec, level, cost float64) time.Duration {
	if level >= cost {
		return 0
	}
	return time.Duration(math.Ceil(float64((cost-level)/spec.Rate)*1000)) * time.Millisecond
}
