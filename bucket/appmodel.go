package bucket

import (
	"math"
	"time"
)

// The application model: each preset layout's level, decision, retry-after and time to
// full, computed the way its owning application computes them, in its own arithmetic and at
// its own time resolution, so that what bucketctl shows is what the application decides.
//
//	layout      clock         resolution  elapsed < 0 (stored time ahead)   TS written back
//	native      Redis TIME    1 µs        no refill, clamped to capacity   max(now, ts)
//	webman      client        1 µs        refills negatively, no clamp     now (on allow only)
//	go-bench    client        1 ms        no refill, clamped               max(now, ts)
//	spring      Redis TIME    1 s         no refill, not even clamped      max(now, ts)
//	multi-tier  client        1 µs        no refill, clamped               now
//	express     client        1 ms        no refill, clamped               now
//
// Custom layouts follow the native rules at their own time unit. Times are microseconds
// since the epoch as the server's clock reads them; for client-clock applications the model
// assumes a client clock that agrees with the server's, since it cannot know another.

// appKind names the algorithm an application runs.
type appKind int

const (
	appGeneric appKind = iota
	appNative
	appWebman
	appGoBench
	appSpring
	appMultiTier
	appExpress
)

// app recognises a preset layout (all of it, not only its name: a custom layout that reuses
// a preset's name but not its shape gets the generic model).
func (l Layout) app() appKind {
	if p, ok := Presets[l.Name]; !ok || p != l {
		return appGeneric
	}
	switch l.Name {
	case "native", "native-hash":
		return appNative
	case "webman":
		return appWebman
	case "go-bench":
		return appGoBench
	case "spring":
		return appSpring
	case "multi-tier":
		return appMultiTier
	case "express":
		return appExpress
	}
	return appGeneric
}

// Step is the application's time resolution: the smallest change of its clock its decisions
// can see (Spring reads whole seconds of Redis TIME, go-bench and Express milliseconds of the
// client's clock). A retry-after is a whole number of steps from a step boundary.
func (l Layout) Step() time.Duration {
	if l.Type == GCRA {
		return time.Microsecond // both libraries read the server's TIME in microseconds
	}
	switch l.app() {
	case appSpring:
		return time.Second
	case appGoBench, appExpress:
		return time.Millisecond
	case appGeneric:
		if !l.FloatTime && l.TimeUnit != "" {
			return time.Duration(1e6/l.TimeUnit.perSecond()) * time.Microsecond
		}
	}
	return time.Microsecond
}

// Level is the bucket as the application's next decision at now (µs) sees it before taking
// anything: Tokens refilled its way, TS the time it writes back with them. stored is the
// level as stored; a missing bucket is Level{Tokens: capacity, TS: now}, as every application
// starts one full. Tokens can be negative (Webman refills negatively from a time ahead of
// its clock) or above capacity (Spring clamps only when it refills).
func (l Layout) Level(spec Spec, stored Level, now int64) Level {
	capacity, rate, tok := spec.Capacity, spec.Rate, stored.Tokens
	// float64() conversions keep the compiler from fusing into FMA, so the arithmetic is
	// the IEEE arithmetic of the applications' Lua.
	switch l.app() {
	case appWebman:
		// timePassed = now - last; math.min(capacity, tokens + timePassed * rate)
		passed := float64(secondsOf(now) - secondsOf(stored.TS))
		return Level{Tokens: math.Min(capacity, float64(tok+float64(passed*rate))), TS: now}
	case appGoBench:
		// delta = max(0, now - ts) in ms; min(burst, tokens + (delta / 1000.0) * rate)
		nowMS, tsMS := float64(floorDiv(now, 1000)), float64(stored.TS)/1e3
		delta := math.Max(0, float64(nowMS-tsMS))
		tok = math.Min(capacity, float64(tok+float64(float64(delta/1000)*rate)))
		return Level{Tokens: tok, TS: int64(math.Round(math.Max(nowMS, tsMS) * 1e3))}
	case appSpring:
		// now = TIME seconds; refill (and clamp) only when now > last_refill_time
		nowS, lastS := float64(floorDiv(now, 1e6)), float64(stored.TS)/1e6
		if nowS > lastS {
			tok = math.Min(capacity, float64(tok+float64(float64(nowS-lastS)*rate)))
			return Level{Tokens: tok, TS: int64(nowS) * 1e6}
		}
		return stored
	case appMultiTier, appExpress:
		// elapsed = max(0, now - last); min(capacity, tokens + elapsed * rate); writes now
		nowS := secondsOf(now)
		if l.app() == appExpress {
			nowS = float64(floorDiv(now, 1000)) / 1e3 // Date.now() / 1000
		}
		elapsed := math.Max(0, float64(nowS-secondsOf(stored.TS)))
		return Level{Tokens: math.Min(capacity, float64(tok+float64(elapsed*rate))), TS: now}
	case appNative:
		return spec.At(stored, now)
	}
	if l.Type == GCRA {
		// A TAT refills linearly and clamps at capacity: the level at one time carries
		// forward exactly.
		return spec.At(stored, now)
	}
	return spec.At(stored, l.Quantize(now))
}

// Decision is a decision the application would make now, without making it.
type Decision struct {
	// Result is the true decision: Allowed as the application decides; Remaining the level
	// it sees (nothing is taken); RetryAfter the true wait until a request of the cost is
	// allowed (-1: never), to the application's next time step; ResetAfter until full.
	Result
	// Ahead is how far the stored time is ahead of now (0 when it is not): a client clock
	// that runs fast, whose refill the application postpones (or, Webman, reverses).
	Ahead time.Duration
	// AppReports says the application replies with a retry-after; AppRetryAfter is the one
	// it replies, which can be shorter than the true wait: Express truncates it to whole
	// seconds, and go-bench, multi-tier and the native script leave out Ahead.
	AppReports    bool
	AppRetryAfter time.Duration
	// RetryByExpiry and FullByExpiry say the key's TTL ends the wait: RetryAfter or
	// ResetAfter is the time until the key expires, when the application starts a full
	// bucket. Refill is the time to full by refill alone, whatever the TTL.
	RetryByExpiry, FullByExpiry bool
	Refill                      time.Duration
	// Writer is the decision of a caller whose clock reads the stored time now, for an
	// application on its callers' clocks whose stored time is ahead (see State.Decide).
	Writer *Decision
}

// AppDiffers says the application reports a retry-after that is wrong by more than one of
// its time steps: too short to be enough (Express's truncation, a time ahead left out),
// finite for a request that is never allowed, or longer than needed. A report off by its
// own rounding (go-bench's ms of need counted from the current ms) is not a difference.
func (d Decision) AppDiffers(step time.Duration) bool {
	switch {
	case !d.AppReports || d.AppRetryAfter == d.RetryAfter:
		return false
	case d.RetryAfter < 0 || d.AppRetryAfter < 0:
		return true
	}
	return d.AppRetryAfter < d.RetryAfter-step || d.AppRetryAfter > d.RetryAfter+step
}

// Decide is the decision the layout's application makes at now (µs) for a request of cost,
// from the stored level (exists=false: a missing bucket, full). It writes nothing.
func (l Layout) Decide(spec Spec, stored Level, exists bool, now int64, cost float64) Decision {
	if l.Type == GCRA {
		var tat *TAT
		if exists {
			tat = l.tatFor(spec, l.Level(spec, stored, now).Tokens, time.UnixMicro(now))
		}
		return l.gcraDecision(spec, tat, now, cost)
	}
	if !exists {
		stored = Level{Tokens: spec.Capacity, TS: now}
	}
	level := l.Level(spec, stored, now).Tokens
	d := Decision{Result: Result{Spec: spec, Remaining: level, Allowed: level >= cost}}
	if exists && stored.TS > now {
		d.Ahead = time.Duration(stored.TS-now) * time.Microsecond
	}
	d.RetryAfter = l.wait(spec, stored, now, cost)
	d.ResetAfter = l.wait(spec, stored, now, spec.Capacity)
	if d.Allowed {
		d.RetryAfter = 0
	}
	deficit := cost - level
	switch l.app() {
	case appNative:
		// retry_after_us = ceil(((cost - tokens) / rate) * 1000000); -1 when cost > capacity
		d.AppReports = true
		switch {
		case cost > spec.Capacity:
			d.AppRetryAfter = -1
		case deficit > 0:
			d.AppRetryAfter = time.Duration(math.Ceil(float64(deficit/spec.Rate)*1e6)) * time.Microsecond
		}
	case appGoBench, appMultiTier:
		// retry_after_ms = math.ceil((need / rate) * 1000)
		d.AppReports = true
		if !d.Allowed {
			d.AppRetryAfter = time.Duration(math.Ceil(float64(deficit/spec.Rate)*1000)) * time.Millisecond
		}
	case appExpress:
		// retry_after = (cost - tokens) / refill_rate, a Lua number that Redis truncates
		// to an integer in the reply: whole seconds, rounded down.
		d.AppReports = true
		if !d.Allowed {
			d.AppRetryAfter = time.Duration(math.Trunc(deficit/spec.Rate)) * time.Second
		}
	}
	return d
}

// TimeToFull is how long until the application sees a full bucket (0 if it does now).
func (l Layout) TimeToFull(spec Spec, stored Level, now int64) time.Duration {
	return l.wait(spec, stored, now, spec.Capacity)
}

// maxWaitUS bounds the waits computed step by step (about 30 years); longer ones are
// computed continuously.
const maxWaitUS = 1e15

// wait is the time from now until the application first sees at least target tokens: the
// first of its time steps at which its level reaches target (0 if it does now, -1 never).
// The level never decreases with time, so the first such step is found by bisection, and is
// exact for the application's own arithmetic.
func (l Layout) wait(spec Spec, stored Level, now int64, target float64) time.Duration {
	level := func(t int64) float64 { return l.Level(spec, stored, t).Tokens }
	if level(now) >= target {
		return 0
	}
	if !(target <= spec.Capacity) || !(spec.Rate > 0) {
		return -1
	}
	step := int64(l.Step() / time.Microsecond)
	first := (floorDiv(now, step) + 1) * step
	// An estimate past the answer: from when refill starts, the deficit at the rate.
	est := float64(max(first, stored.TS)) + math.Max(0, target-math.Min(stored.Tokens, spec.Capacity))/spec.Rate*1e6
	if !(est-float64(now) < maxWaitUS) {
		return spec.Wait(level(now), target)
	}
	hi := (floorDiv(int64(math.Ceil(est)), step) + 2) * step
	for level(hi) < target {
		hi += hi - now
		if hi-now > maxWaitUS {
			return spec.Wait(level(now), target)
		}
	}
	// The first step boundary in [first, hi] at which the level reaches target.
	lo, n := int64(0), (hi-first)/step
	for lo < n {
		mid := lo + (n-lo)/2
		if level(first+mid*step) >= target {
			n = mid
		} else {
			lo = mid + 1
		}
	}
	return time.Duration(first+lo*step-now) * time.Microsecond
}

// secondsOf is a time in µs as the float seconds an application reads from a decimal string
// with six decimals (or its clock): the nearest double to us/1e6.
func secondsOf(us int64) float64 { return float64(us) / 1e6 }

// floorDiv divides rounding toward minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// resetGrace is how long a reset bucket of a layout whose application sets no TTL of its
// own (Webman, go-bench, custom layouts) is kept after it would be full, like the native
// script's default grace.
const resetGrace = 60 * time.Second

// ResetWrite is what a reset to tokens writes for the layout's application at server time
// now (µs), given the bucket as stored (exists=false: no bucket): the tokens and the time in
// the application's own number format and unit, and the TTL to set (0 when the spec is
// unknown: keep the key's TTL).
//
// The time is never earlier than the stored one, max(now, stored time) (KeepsLaterTime): a
// stored time ahead of the server's was written by a client whose clock runs fast, and
// writing the server's time would hand that client the refill of its lead (go-bench's own
// max(now, ts) protects against exactly that); those applications read the tokens as written
// until their clock passes it. Webman is the exception: it refills negatively from a time
// ahead of its clock (it never clamps), so a kept lead would make every caller on the
// server's clock read tokens − lead × rate; its reset writes the server's now, and
// ResetReads says what the fast writer reads instead. Spring's and go-bench's whole units
// are rounded down, as those applications write them.
//
// The TTL is the one the application itself sets after a write (Spring ceil(cap/rate)+60 s,
// multi-tier ceil(2·burst/rate) s, Express ceil(2·cap/rate) s), longer only when a time
// ahead of the server's postpones the refill beyond it; the native script's (until full plus
// its 60 s grace); for applications that set none (Webman, go-bench: the caller's), until
// full plus 60 s. Each covers the refill to full, so the key's expiry is lossless: a missing
// bucket reads as full.
func (l Layout) ResetWrite(spec Spec, stored Level, exists bool, now int64, tokens float64) (tokensStr, timeStr string, ttl time.Duration) {
	if l.Type == GCRA {
		// The TAT value and the library's TTL (gcraReset); timeStr is unused.
		w, err := l.gcraReset(spec, tokens, time.UnixMicro(now))
		if err != nil || w.Delete {
			return "", "", 0
		}
		return w.Value, "", w.TTL
	}
	at := now
	if exists && stored.TS > at && l.KeepsLaterTime() {
		at = stored.TS
	}
	tokensStr, timeStr = l.FormatTokens(tokens), l.FormatTime(at)
	if spec.IsZero() || spec.Validate() != nil {
		return tokensStr, timeStr, 0
	}
	written, err := l.ParseTime(timeStr)
	if err != nil {
		written = at
	}
	full := l.TimeToFull(spec, Level{Tokens: tokens, TS: written}, now)
	if full < 0 {
		full = 0
	}
	ceilTo := func(d, unit time.Duration) time.Duration { return (d + unit - 1) / unit * unit }
	var own time.Duration
	switch l.app() {
	case appNative:
		return tokensStr, timeStr, ceilTo(full, time.Millisecond) + resetGrace
	case appSpring:
		own = time.Duration(math.Ceil(spec.Capacity/spec.Rate)+60) * time.Second
	case appMultiTier:
		own = time.Duration(math.Ceil(spec.Capacity/spec.Rate*2)) * time.Second
	case appExpress:
		own = time.Duration(math.Ceil(2*spec.Capacity/spec.Rate)) * time.Second
	default:
		return tokensStr, timeStr, ceilTo(full, time.Second) + resetGrace
	}
	return tokensStr, timeStr, max(own, ceilTo(full, time.Second))
}

// KeepsLaterTime says a reset keeps a stored time ahead of the server's rather than write
// the server's now (see ResetWrite): every layout but Webman's, whose application refills
// negatively from a time ahead of its caller's clock.
func (l Layout) KeepsLaterTime() bool { return l.app() != appWebman }

// NoTTLByDesign says the layout's application sets no TTL on purpose (webman): a bucket
// without one is not a leak.
func (l Layout) NoTTLByDesign() bool { return l.app() == appWebman }
