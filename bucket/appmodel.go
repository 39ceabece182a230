package bucket

import (
	"math"
	"time"
)

// Step is the owner's time resolution: a retry-after is a whole number of steps.
func (l Layout) Step() time.Duration { return l.Model().Step(l) }

// Level is the bucket as the application's next decision at now (µs) sees it.
func (l Layout) Level(spec Spec, stored Level, now int64) Level {
	return l.Model().Level(l, spec, stored, now)
}

// Decision is what the application would decide now, without deciding.
type Decision struct {
	Result                                    // Remaining is the level seen; RetryAfter the true wait (-1: never)
	Ahead                       time.Duration // how far the stored time is ahead of now
	AppReports                  bool          // the application replies a retry-after: AppRetryAfter
	AppRetryAfter               time.Duration
	RetryByExpiry, FullByExpiry bool          // the key's TTL ends the wait
	Refill                      time.Duration // the time to full by refill alone
	Writer                      *Decision     // a caller's whose clock reads the stored time now
}

// AppDiffers says the application's retry-after is wrong by more than one time step.
func (d Decision) AppDiffers(step time.Duration) bool {
	switch {
	case !d.AppReports || d.AppRetryAfter == d.RetryAfter:
		return false
	case d.RetryAfter < 0 || d.AppRetryAfter < 0:
		return true
	}
	return d.AppRetryAfter < d.RetryAfter-step || d.AppRetryAfter > d.RetryAfter+step
}

// Decide is the decision the layout's application makes at now (µs) for a request of cost.
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
	d.ResetAfter = l.TimeToFull(spec, stored, now)
	if d.Allowed {
		d.RetryAfter = 0
	}
	d.AppRetryAfter, d.AppReports = m.AppRetryAfter(spec, level, cost)
	return d
}

// TimeToFull is how long until the application sees a full bucket.
func (l Layout) TimeToFull(spec Spec, stored Level, now int64) time.Duration {
	return l.waitUntil(spec, stored, now, spec.Capacity, func(lv float64) bool { return lv >= spec.Capacity })
}

const maxWaitUS = 1e15

// waitUntil is the time to the first of the application's steps where reached(level) holds.
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

func secondsOf(us int64) float64 { return float64(us) / 1e6 }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// ResetWrite is what a reset to tokens writes at now (µs), in the application's format.
func (l Layout) ResetWrite(spec Spec, stored Level, exists bool, now int64, tokens float64) (tokensStr, timeStr string, ttl time.Duration) {
	if l.Type == GCRA {
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
	full := max(0, l.TimeToFull(spec, Level{Tokens: tokens, TS: written}, now))
	return tokensStr, timeStr, l.Model().ResetTTL(spec, full)
}

// KeepsLaterTime says a reset keeps a stored time ahead of the server's (all but webman).
func (l Layout) KeepsLaterTime() bool { return !l.Model().RefillsBackwards() }

// Decide is the decision the bucket's application makes now for a request of cost.
func (s State) Decide(cost float64) Decision {
	if s.Layout.Type == GCRA {
		return s.withExpiry(s.Layout.gcraDecision(s.Spec, s.gcraStored(), s.Now, cost), cost)
	}
	stored := s.Stored
	if s.Exists {
		if lv := s.Layout.Level(s.Spec, stored, s.Now); lv.Tokens != s.Tokens {
			stored = Level{Tokens: s.Tokens, TS: max(s.Now, lv.TS)}
		}
	}
	d := s.withExpiry(s.Layout.Decide(s.Spec, stored, s.Exists, s.Now, cost), cost)
	if s.Exists && stored.TS > s.Now && s.Layout.ClientClock() {
		w := s.withExpiry(s.Layout.Decide(s.Spec, stored, true, stored.TS, cost), cost)
		d.Writer = &w
	}
	return d
}

func (s State) withExpiry(d Decision, cost float64) Decision {
	d.Refill = d.ResetAfter
	if !s.Exists || s.TTL < 0 {
		return d
	}
	ttl := s.TTL
	if d.RetryAfter > ttl && !(cost > s.Spec.Capacity) {
		d.RetryAfter, d.RetryByExpiry = max(ttl, time.Millisecond), true
	}
	if d.ResetAfter > ttl {
		d.ResetAfter, d.FullByExpiry = ttl, true
	}
	return d
}

// ClientClock says the layout's application passes its callers' clock, not TIME.
func (l Layout) ClientClock() bool {
	return l.Type != GCRA && (l.Clock == "client" || l.Clock == "" && l.Model().ClientClock())
}

// ClockSplit says the decisions on the server's clock and the writer's differ by more than step.
func (d Decision) ClockSplit(step time.Duration) bool {
	if d.Writer == nil {
		return false
	}
	w := d.Writer
	diff := func(a, b time.Duration) bool { return a-b > step || b-a > step }
	return w.Allowed != d.Allowed || math.Abs(w.Remaining-d.Remaining) > 1e-9 ||
		diff(w.RetryAfter, d.RetryAfter) || diff(w.ResetAfter, d.ResetAfter)
}

// RefillTime is the time to full by refill alone, whatever the TTL.
func (s State) RefillTime() time.Duration {
	if !s.HasSpec() {
		return 0
	}
	return s.Decide(0).Refill
}

// Ambiguous says the bucket's next decision depends on the next caller's clock (ClockSplit).
func (s State) Ambiguous() bool {
	if s.Problem != "" || !s.HasSpec() || !s.Exists {
		return false
	}
	return s.Decide(1).ClockSplit(s.Layout.Step())
}

// ResetReads is the level read after a reset, on the server's and the writer's clock.
func (l Layout) ResetReads(spec Spec, stored Level, exists bool, now int64, tokens float64) (server, writer float64, writerDiffers bool) {
	if l.Type == GCRA {
		w, err := l.gcraReset(spec, tokens, time.UnixMicro(now))
		if err != nil || w.Delete {
			return spec.Capacity, spec.Capacity, false
		}
		lv, _ := l.gcraTokens(spec, w.TAT, time.UnixMicro(now))
		return lv, lv, false
	}
	_, ts, _ := l.ResetWrite(spec, stored, exists, now, tokens)
	written, err := l.ParseTime(ts)
	if err != nil {
		return tokens, tokens, false
	}
	lv := Level{Tokens: tokens, TS: written}
	server = l.Level(spec, lv, now).Tokens
	writer = server
	if exists && stored.TS > now && l.ClientClock() {
		writer = l.Level(spec, lv, stored.TS).Tokens
	}
	return server, writer, math.Abs(writer-server) > 1e-9
}
