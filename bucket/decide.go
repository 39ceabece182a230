package bucket

import (
	"math"
	"time"
)

// State.Decide is the one answer to "what would the application decide": check, inspect's
// figures (State.Peek, State.TimeToFull), list, top, watch and audit all ask it, so no verb
// can tell the operator something another verb, or the application, would not. Per layout
// it is the application's own model (Layout.Level and Layout.Decide in appmodel.go; the
// library's GCRA arithmetic from the stored TAT in gcra_state.go, debt beyond a lowered
// burst included), then what no stored level says:
//
//   - the key's TTL: a wait never outlasts the key. When the key expires before a wait
//     ends, the application starts a full bucket then, so the wait is the expiry, and the
//     Decision says so (RetryByExpiry, FullByExpiry).
//   - the stored time ahead of the server's clock (Ahead): for applications that pass their
//     callers' clock (webman, go-bench, multi-tier, express) the next decision depends on
//     the caller's clock, which bucketctl cannot read. The Decision is made on the server's
//     clock (a caller whose clock agrees with it) and Writer holds the decision of a caller
//     whose clock reads the stored time now: the writer's, if it wrote just now (it runs at
//     least Ahead fast).

// Decide is the decision the bucket's application makes now for a request of cost, without
// making it (see above). The state must have its spec; a state built or changed by hand
// (its Tokens not the level its stored value gives) is decided from Tokens at Now.
func (s State) Decide(cost float64) Decision {
	if s.Layout.Type == GCRA {
		d := s.Layout.gcraDecision(s.Spec, s.gcraStored(), s.Now, cost)
		return s.withExpiry(d, cost)
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

// withExpiry ends the waits of d at the key's expiry: after it the application reads a
// missing key, a full bucket, which allows any cost up to capacity.
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

// ClientClock says the layout's application passes its callers' clock (Webman's microtime,
// go-bench's and Express's milliseconds, multi-tier's time()), not the server's TIME: a
// stored time ahead of the server's was written by a caller whose clock runs fast, and the
// next decision depends on the next caller's clock.
func (l Layout) ClientClock() bool {
	return l.Type != GCRA && (l.Clock == "client" || l.Clock == "" && l.Model().ClientClock())
}

// ClockSplit says the decision on the server's clock and the writer's differ (whether the
// request is allowed, the level, or the wait by more than the application's time step): the
// answer depends on which caller comes next, the one case of a client-clock layout that
// bucketctl cannot know.
func (d Decision) ClockSplit(step time.Duration) bool {
	if d.Writer == nil {
		return false
	}
	w := d.Writer
	diff := func(a, b time.Duration) bool { return a-b > step || b-a > step }
	return w.Allowed != d.Allowed || math.Abs(w.Remaining-d.Remaining) > 1e-9 ||
		diff(w.RetryAfter, d.RetryAfter) || diff(w.ResetAfter, d.ResetAfter)
}

// RefillTime is how long the bucket takes to refill to full by its rate alone, whatever its
// TTL (audit compares the two); TimeToFull is never past the key's expiry.
func (s State) RefillTime() time.Duration {
	if !s.HasSpec() {
		return 0
	}
	return s.Decide(0).Refill
}

// Ambiguous says whether the figures shown for the bucket are genuinely ambiguous: a
// client-clock application's bucket written ahead of the server's clock (s.Ahead), whose
// next decision depends on the clock of the next caller.
func (s State) Ambiguous() bool {
	if s.Problem != "" || !s.HasSpec() || !s.Exists {
		return false
	}
	return s.Decide(1).ClockSplit(s.Layout.Step())
}

// ResetReads is what the layout's application reads right after a reset wrote tokens at
// server time now (µs), the bucket read before as stored (exists=false: none): server is the
// level on the server's clock (every application's, for a caller whose clock agrees with
// it); writer, for a client-clock application whose stored time was ahead, the level a
// caller whose clock reads that stored time now sees (writerDiffers says it is another).
// Each is in the application's own arithmetic, from the time the reset writes.
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
