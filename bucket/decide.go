package bucket

import (
	"math"
	"time"
)

// Decide is the decision the bucket's application makes now for a request of cost, without
// making it: the one answer every verb shows. Waits end at the key's expiry; for a
// client-clock layout written ahead of the server, Writer holds the fast writer's decision.
// A state changed by hand (Tokens not its stored level) is decided from Tokens at Now.
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

// withExpiry ends the waits of d at the key's expiry, after which the bucket reads full.
func (s State) withExpiry(d Decision, cost float64) Decision {
	d.Refill = d.ResetAfter
	if !s.Exists || s.TTL < 0 {
		return d
	}
	ttl := s.TTL
	if d.RetryAfter > ttl && !(cost > s.Spec.Capacity) {
		// PTTL counts whole ms; a key at its last ms is gone within one.
		d.RetryAfter, d.RetryByExpiry = max(ttl, time.Millisecond), true
	}
	if d.ResetAfter > ttl {
		d.ResetAfter, d.FullByExpiry = ttl, true
	}
	return d
}

// ClientClock says the layout's application passes its callers' clock, not the server's
// TIME, so a stored time ahead of the server's came from a fast client.
func (l Layout) ClientClock() bool {
	return l.Type != GCRA && (l.Clock == "client" || l.Clock == "" && l.Model().ClientClock())
}

// ClockSplit says the decisions on the server's clock and the writer's differ by more than
// step: the answer depends on which caller comes next.
func (d Decision) ClockSplit(step time.Duration) bool {
	if d.Writer == nil {
		return false
	}
	w := d.Writer
	diff := func(a, b time.Duration) bool { return a-b > step || b-a > step }
	return w.Allowed != d.Allowed || math.Abs(w.Remaining-d.Remaining) > 1e-9 ||
		diff(w.RetryAfter, d.RetryAfter) || diff(w.ResetAfter, d.ResetAfter)
}

// RefillTime is how long the bucket takes to refill to full by its rate, whatever its TTL.
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

// ResetReads is the level the application reads right after a reset wrote tokens at server
// time now (µs): on the server's clock, and for a client-clock bucket stored ahead, on the
// fast writer's (writerDiffers says they differ).
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
