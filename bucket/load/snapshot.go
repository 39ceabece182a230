package load

import (
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bucketctl/bucketctl/bucket"
)

// Snapshot is the state of a run so far, for a live view.
type Snapshot struct {
	Key      string
	Strategy Strategy
	Spec     bucket.Spec
	// Elapsed is the time since the start; Duration and Requests the run's bounds
	// (Requests 0: none).
	Elapsed  time.Duration
	Duration time.Duration
	Requests int64
	// Decisions made so far (allowed + denied + errors) and their parts.
	Decisions, Allowed, Denied, Errors int64
	Retries, Calls                     int64
	// Tokens is the bucket's level after the latest decision (HasTokens: one was made).
	Tokens    float64
	HasTokens bool
	Latency   Latency
	PerSecond []Second // the decisions completed in each second since the start
	Running   bool     // false before the start and after the end
}

// Progress is how far the run is towards its nearest bound, in [0,1].
func (s Snapshot) Progress() float64 {
	p := 0.0
	if s.Duration > 0 {
		p = float64(s.Elapsed) / float64(s.Duration)
	}
	if s.Requests > 0 {
		p = max(p, float64(s.Decisions)/float64(s.Requests))
	}
	return math.Min(1, math.Max(0, p))
}

// merged sums the shards: their counts, histograms, error messages and seconds.
func (e *Engine) merged() (counts, *hdr.Histogram, map[string]int64, []Second) {
	tot, h, errs := counts{first: -1}, newHistogram(), map[string]int64{}
	var secs []Second
	for _, sh := range e.shards {
		sh.mu.Lock()
		tot.add(&sh.c)
		h.Merge(sh.hist)
		for m, n := range sh.errs {
			errs[m] += n
		}
		secs = append(secs, make([]Second, max(0, len(sh.seconds)-len(secs)))...)
		for i, s := range sh.seconds {
			secs[i] = Second{secs[i].Allowed + s.Allowed, secs[i].Denied + s.Denied, secs[i].Errors + s.Errors}
		}
		sh.mu.Unlock()
	}
	return tot, h, errs, secs
}

// Snapshot returns the run so far. It is safe to call at any time, from any goroutine.
func (e *Engine) Snapshot() Snapshot {
	c, h, _, secs := e.merged()
	s := Snapshot{Key: e.cfg.Key, Strategy: e.cfg.Strategy, Spec: e.cfg.Spec,
		Duration: e.cfg.Duration, Requests: e.cfg.Requests,
		Decisions: c.allowed + c.denied + c.errors, Allowed: c.allowed, Denied: c.denied, Errors: c.errors,
		Retries: c.retries, Calls: c.calls, Tokens: c.tokens, HasTokens: c.hasLevel,
		Latency: latencyOf(h), PerSecond: secs}
	e.mu.Lock()
	switch {
	case e.running:
		s.Elapsed, s.Running = time.Since(e.start), true
	case e.done:
		s.Elapsed = e.finish
	}
	e.mu.Unlock()
	return s
}
