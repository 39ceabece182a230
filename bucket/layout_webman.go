package bucket

import "math"

// webman: PHP/Webman middleware (seed 000, scripts/third_party/apps/webman.lua).
func init() {
	register(Layout{Name: "webman", Type: Strings, TokensKey: "*", TimeKey: "*:last_time", TimeUnit: unitS, FloatTime: true,
		model: webmanModel{},
		About: "PHP/Webman middleware: string KEY = tokens, string KEY:last_time = seconds (float); no TTL"})
}

type webmanModel struct{ ownModel }

// Level: math.min(capacity, tokens + (now - last) * rate), negative refill included.
func (webmanModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	passed := float64(secondsOf(now) - secondsOf(stored.TS))
	return Level{Tokens: math.Min(spec.Capacity, float64(stored.Tokens+float64(passed*spec.Rate))), TS: now}
}

func (webmanModel) ClientClock() bool      { return true }
func (webmanModel) RefillsBackwards() bool { return true }
func (webmanModel) NoTTLByDesign() bool    { return true }
