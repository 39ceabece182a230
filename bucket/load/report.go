package load

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bucketctl/bucketctl/bucket"
)

// Report is the outcome of a run. Its JSON and YAML field names are stable.
type Report struct {
	Server               string   `json:"server"`
	Key                  string   `json:"key"`
	Strategy             Strategy `json:"strategy"`
	Arrival              Arrival  `json:"arrival"`
	ArrivalRate          float64  `json:"arrival_rate"`
	BurstEveryS          float64  `json:"burst_every_s"`
	BurstSize            int      `json:"burst_size"`
	Concurrency          int      `json:"concurrency"`
	Pipeline             int      `json:"pipeline"`
	Capacity             float64  `json:"capacity"`
	Rate                 float64  `json:"rate"`
	Cost                 float64  `json:"cost"`
	DurationS            float64  `json:"duration_s"` // from the first request sent to the last answer
	Requests             int64    `json:"requests"`   // Allowed + Denied + Errors
	Allowed              int64    `json:"allowed"`
	Denied               int64    `json:"denied"`
	Errors               int64    `json:"errors"`
	Retries              int64    `json:"retries"` // the watch strategy's (a watched key changed before EXEC)
	Unsent               int64    `json:"unsent"`  // open-loop arrivals due that no worker was free to send
	RedisCalls           int64    `json:"redis_calls"`
	RedisCallsPerRequest float64  `json:"redis_calls_per_request"`
	OpsPerSec            float64  `json:"ops_per_sec"`     // decisions answered per second of DurationS
	TheoreticalMax       int64    `json:"theoretical_max"` // see TheoreticalMax
	// OverGrantPct is (allowed - theoretical_max) / theoretical_max × 100.
	OverGrantPct float64       `json:"over_grant_pct"`
	LatencyMS    Latency       `json:"latency_ms"`
	Histogram    []Band        `json:"latency_histogram"`
	PerSecond    []Second      `json:"per_second"`
	ErrorSamples []ErrorSample `json:"error_samples"`
	Interrupted  bool          `json:"interrupted"` // stopped before its bounds (Ctrl-C)
}

// ErrorSample is one distinct error message and how often it came.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// TheoreticalMax is floor((capacity + rate × d) / cost): the most a full bucket allows over d.
func TheoreticalMax(spec bucket.Spec, cost float64, d time.Duration) int64 {
	tokens := spec.Capacity + spec.Rate*d.Seconds()
	return int64(math.Floor(tokens/cost + 1e-9))
}

func (e *Engine) report(interrupted bool, unsent int64) Report {
	c, h, errs, secs := e.merged()
	cfg := e.cfg
	r := Report{Key: cfg.Key, Strategy: cfg.Strategy, Arrival: cfg.Arrival, ArrivalRate: cfg.ArrivalRate,
		BurstEveryS: cfg.BurstEvery.Seconds(), BurstSize: cfg.BurstSize,
		Concurrency: cfg.Concurrency, Pipeline: cfg.Pipeline,
		Capacity: cfg.Spec.Capacity, Rate: cfg.Spec.Rate, Cost: cfg.Cost,
		Allowed: c.allowed, Denied: c.denied, Errors: c.errors, Retries: c.retries, Unsent: unsent,
		RedisCalls: c.calls, LatencyMS: latencyOf(h), Histogram: append([]Band{}, bands(h)...),
		PerSecond: append([]Second{}, secs...), Interrupted: interrupted, ErrorSamples: errorSamples(errs)}
	r.Requests = r.Allowed + r.Denied + r.Errors
	var span time.Duration
	if c.first >= 0 {
		span = c.last - c.first
	}
	r.DurationS = span.Seconds()
	if r.Requests > 0 {
		r.RedisCallsPerRequest = float64(r.RedisCalls) / float64(r.Requests)
	}
	if span > 0 {
		r.OpsPerSec = float64(r.Allowed+r.Denied) / span.Seconds()
	}
	r.TheoreticalMax = TheoreticalMax(cfg.Spec, cfg.Cost, span)
	if r.TheoreticalMax > 0 {
		r.OverGrantPct = float64(r.Allowed-r.TheoreticalMax) / float64(r.TheoreticalMax) * 100
	}
	return r
}

func errorSamples(errs map[string]int64) []ErrorSample {
	out := make([]ErrorSample, 0, len(errs))
	for m, n := range errs {
		out = append(out, ErrorSample{Message: m, Count: n})
	}
	slices.SortFunc(out, func(a, b ErrorSample) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Message, b.Message))
	})
	return out
}

// Snapshot is the state of a run so far, for a live view.
type Snapshot struct {
	Key      string
	Strategy Strategy
	Spec     bucket.Spec
	// Elapsed is the time since the start; Duration and Requests the bounds (0: none).
	Elapsed                            time.Duration
	Duration                           time.Duration
	Requests                           int64
	Decisions, Allowed, Denied, Errors int64
	Retries, Calls                     int64
	Tokens                             float64 // the level after the latest decision
	HasTokens                          bool    // one was made
	Latency                            Latency
	PerSecond                          []Second // the decisions completed in each second since the start
	Running                            bool     // false before the start and after the end
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

// Snapshot returns the run so far, from any goroutine.
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
