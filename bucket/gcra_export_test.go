package bucket

import "time"

// LuaDuration is luaDuration, for tests.
var LuaDuration = luaDuration

// The GCRA model's methods, for the external tests.

func (l Layout) ParseTAT(v string) (TAT, error) { return l.parseTAT(v) }

func (l Layout) GCRATokens(spec Spec, t TAT, now time.Time) (float64, time.Duration) {
	return l.gcraTokens(spec, t, now)
}

func (l Layout) GCRADecide(spec Spec, stored *TAT, now time.Time, cost int) (gcraAnswer, error) {
	return l.gcraDecide(spec, stored, now, cost)
}

func (l Layout) GCRAReset(spec Spec, tokens float64, now time.Time) (gcraWrite, error) {
	return l.gcraReset(spec, tokens, now)
}

func (l Layout) GCRAShape(key, value string, pttl time.Duration, now time.Time) (gcraFit, string) {
	return l.gcraShape(key, value, pttl, now)
}

// GCRAOverdraw is the library's overdraw (tokens below empty its rounding allows).
func (l Layout) GCRAOverdraw() float64 { lib, _ := l.lib(); return lib.overdraw() }

// GCRATTLRule is the library's TTL rule: at its write, TAT − now in (TTL − under, TTL + over].
func (l Layout) GCRATTLRule() (under, over time.Duration) { lib, _ := l.lib(); return lib.ttlRule() }
