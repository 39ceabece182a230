package bucket

import (
	"math"
	"time"
)

// The owner's model: each preset's Model (layout_NAME.go) computes its level, retry-after
// and TTL the way its owning application does, in its own arithmetic and at its own time
// resolution, so that what bucketctl shows is what the application decides. Times are
// microseconds since the epoch as the server's clock reads them; for client-clock owners the
// model assumes a client clock that agrees with the server's, since it cannot know another.

// Step is the owner's time resolution: a retry-after is a whole number of steps from a
// step boundary.
func (l Layout) Step() time.Duration {
	if l.Type == GCRA {
		return time.Microsecond // both libraries read the server's TIME in microseconds
	}
	return l.Model().Step(l)
}

// Level is the bucket as the application's next decision at now (µs) sees it before taking
// anything: Tokens refilled its way, TS the time it writes back with them. stored is the
// level as stored; a missing bucket is Level{Tokens: capacity, TS: now}, as every application
// starts one full. Tokens can be negative (Webman refills negatively from a time ahead of
// its clock) or above capacity (Spring clamps only when it refills).
func (l Layout) Level(spec Spec, stored Level, now int64) Level {
	if l.Type == GCRA {
		// A TAT refills linearly and clamps at capacity: the level at one time carries
		// forward exactly.
		return spec.At(stored, now)
	}
	return l.Model().Level(l, spec, stored, now)
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
	level, m := l.Level(spec, stored, now).Tokens, l.Model()
	d := Decision{Result: Result{Spec: spec, Remaining: level, Allowed: m.Allows(spec, level, cost)}}
	if exists && stored.TS > now {
		d.Ahead = time.Duration(stored.TS-now) * time.Microsecond
	}
	d.RetryAfter = l.waitUntil(spec, stored, now, cost, func(lv float64) bool { return m.Allows(spec, lv, cost) })
	d.ResetAfter = l.wait(spec, stored, now, spec.Capacity)
	if d.Allowed {
		d.RetryAfter = 0
	}
	d.AppRetryAfter, d.AppReports = m.AppRetryAfter(spec, level, cost)
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
	return l.waitUntil(spec, stored, now, target, func(lv float64) bool { return lv >= target })
}

// waitUntil is wait for the first step at which reached(level) holds, a test no stricter
// than level >= target.
func (l Layout) waitUntil(spec Spec, stored Level, now int64, target float64, reached func(float64) bool) time.Duration {
	level := func(t int64) float64 { return l.Level(spec, stored, t).Tokens }
	if reached(level(now)) {
		return 0
	}
	if !reached(spec.Capacity) || !(spec.Rate > 0) {
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
	for !reached(level(hi)) {
		hi += hi - now
		if hi-now > maxWaitUS {
			return spec.Wait(level(now), target)
		}
	}
	// The first step boundary in [first, hi] at which the level reaches target.
	lo, n := int64(0), (hi-first)/step
	for lo < n {
		mid := lo + (n-lo)/2
		if reached(level(first + mid*step)) {
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
	return tokensStr, timeStr, l.Model().ResetTTL(spec, full)
}

// KeepsLaterTime says a reset keeps a stored time ahead of the server's rather than write
// the server's now (see ResetWrite): every layout but Webman's, whose application refills
// negatively from a time ahead of its caller's clock.
func (l Layout) KeepsLaterTime() bool { return !l.Model().RefillsBackwards() }

// NoTTLByDesign says the layout's application sets no TTL on purpose (webman): a bucket
// without one is not a leak.
func (l Layout) NoTTLByDesign() bool { return l.Model().NoTTLByDesign() }
