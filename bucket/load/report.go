package load

import (
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bucketctl/bucketctl/bucket"
)

// Report is the outcome of a run. Its JSON and YAML field names are stable.
type Report struct {
	// Server names the Redis the run went to; the engine leaves it to the caller.
	Server      string   `json:"server"`
	Key         string   `json:"key"`
	Strategy    Strategy `json:"strategy"`
	Arrival     Arrival  `json:"arrival"`
	ArrivalRate float64  `json:"arrival_rate"`
	BurstEveryS float64  `json:"burst_every_s"`
	BurstSize   int      `json:"burst_size"`
	Concurrency int      `json:"concurrency"`
	Pipeline    int      `json:"pipeline"`
	Capacity    float64  `json:"capacity"`
	Rate        float64  `json:"rate"`
	Cost        float64  `json:"cost"`
	// DurationS is the measured duration T: from the first request sent to the last answer.
	DurationS float64 `json:"duration_s"`
	// Requests is the decisions sent: Allowed + Denied + Errors.
	Requests int64 `json:"requests"`
	Allowed  int64 `json:"allowed"`
	Denied   int64 `json:"denied"`
	Errors   int64 `json:"errors"`
	// Retries are the watch strategy's retries (a watched key changed before EXEC).
	Retries int64 `json:"retries"`
	// Unsent are open-loop arrivals due before the end that no worker was free to send.
	Unsent int64 `json:"unsent"`
	// RedisCalls are round trips to Redis; a pipeline of N decisions is one.
	RedisCalls           int64   `json:"redis_calls"`
	RedisCallsPerRequest float64 `json:"redis_calls_per_request"`
	// OpsPerSec is the decisions answered (allowed + denied) per second of DurationS.
	OpsPerSec float64 `json:"ops_per_sec"`
	// TheoreticalMax is the most a correct limiter allows in DurationS from a full bucket:
	// floor((capacity + rate × duration_s) / cost).
	TheoreticalMax int64 `json:"theoretical_max"`
	// OverGrantPct is (allowed - theoretical_max) / theoretical_max × 100: above 0 the
	// limiter let through more than it may; below 0 it granted less than it could.
	OverGrantPct float64       `json:"over_grant_pct"`
	LatencyMS    Latency       `json:"latency_ms"`
	Histogram    []Band        `json:"latency_histogram"`
	PerSecond    []Second      `json:"per_second"`
	ErrorSamples []ErrorSample `json:"error_samples"`
	// Interrupted marks a run stopped before its bounds (Ctrl-C): the report so far.
	Interrupted bool `json:"interrupted"`
}

// ErrorSample is one distinct error message and how often it came.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

func (r Report) Duration() time.Duration { return time.Duration(r.DurationS * float64(time.Second)) }

// TheoreticalMax is the most decisions of cost a bucket of spec allows over d, starting
// full: floor((capacity + rate × d) / cost).
func TheoreticalMax(spec bucket.Spec, cost float64, d time.Duration) int64 {
	tokens := spec.Capacity + spec.Rate*d.Seconds()
	// A hair of tolerance so 40 tokens of cost 1 read as 40, not 39.999….
	return int64(math.Floor(tokens/cost + 1e-9))
}

func (e *Engine) report(interrupted bool, unsent int64) Report {
	c, hs, secs := e.merged()
	cfg := e.cfg
	r := Report{Key: cfg.Key, Strategy: cfg.Strategy, Arrival: cfg.Arrival, ArrivalRate: cfg.ArrivalRate,
		BurstEveryS: cfg.BurstEvery.Seconds(), BurstSize: cfg.BurstSize,
		Concurrency: cfg.Concurrency, Pipeline: cfg.Pipeline,
		Capacity: cfg.Spec.Capacity, Rate: cfg.Spec.Rate, Cost: cfg.Cost,
		Allowed: c.allowed, Denied: c.denied, Errors: c.errors, Retries: c.retries, Unsent: unsent,
		RedisCalls: c.calls, LatencyMS: latencyOf(hs.h), Histogram: bands(hs.h), PerSecond: secs,
		Interrupted: interrupted, ErrorSamples: hs.errorSamples()}
	if r.PerSecond == nil {
		r.PerSecond = []Second{}
	}
	if r.Histogram == nil {
		r.Histogram = []Band{}
	}
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

// histogramSet merges the shards' histograms and error messages.
type histogramSet struct {
	h    *hdr.Histogram
	errs map[string]int64
}

func newHistogramSet() *histogramSet {
	return &histogramSet{h: hdr.New(histMin, histMax, histDigits), errs: map[string]int64{}}
}

func (s *histogramSet) merge(sh *shard) {
	s.h.Merge(sh.hist)
	for m, n := range sh.errs {
		s.errs[m] += n
	}
}

func (s *histogramSet) errorSamples() []ErrorSample {
	out := make([]ErrorSample, 0, len(s.errs))
	for m, n := range s.errs {
		out = append(out, ErrorSample{Message: m, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Message < out[j].Message
	})
	return out
}
