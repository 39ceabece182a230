package load

import (
	"math"
	"sort"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Latencies are recorded in microseconds from 1 µs to an hour with 3 significant digits.
const (
	histMin       = 1
	histMax       = int64(time.Hour / time.Microsecond)
	histDigits    = 3
	maxShards     = 16 // bounds the histograms' memory (~190 KB each)
	maxErrorKinds = 8  // distinct error messages kept per shard
)

// Second is one second of the run: the decisions that completed in it.
type Second struct {
	Allowed int64 `json:"allowed"`
	Denied  int64 `json:"denied"`
	Errors  int64 `json:"errors"`
}

type counts struct {
	allowed, denied, errors int64
	retries, calls          int64
	first, last             time.Duration // the earliest send (-1 before one), the latest answer
	tokens                  float64       // the level after the latest decision, at tokensAt
	tokensAt                time.Duration
	hasLevel                bool
}

func (c *counts) add(o *counts) {
	c.allowed, c.denied, c.errors = c.allowed+o.allowed, c.denied+o.denied, c.errors+o.errors
	c.retries, c.calls = c.retries+o.retries, c.calls+o.calls
	if o.first >= 0 && (c.first < 0 || o.first < c.first) {
		c.first = o.first
	}
	if o.last > c.last {
		c.last = o.last
	}
	if o.hasLevel && (!c.hasLevel || o.tokensAt >= c.tokensAt) {
		c.tokens, c.tokensAt, c.hasLevel = o.tokens, o.tokensAt, true
	}
}

// shard is one lock's worth of statistics; a few workers share each.
type shard struct {
	mu      sync.Mutex
	c       counts
	hist    *hdr.Histogram
	seconds []Second
	errs    map[string]int64
}

func newHistogram() *hdr.Histogram { return hdr.New(histMin, histMax, histDigits) }

// outcome is one round trip; intended is an open loop's intended send time, else first.
type outcome struct {
	counts
	intended time.Duration
	errs     []error
}

func (s *shard) record(o *outcome) {
	lat := min(max((o.last-o.intended).Microseconds(), histMin), histMax)
	sec := int(o.last / time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := o.allowed + o.denied; n > 0 {
		_ = s.hist.RecordValues(lat, n)
	}
	for _, err := range o.errs {
		if err == nil {
			continue
		}
		o.errors++
		msg := rediserr.ReplyText(err) // without a script's SHA1 and line
		if _, ok := s.errs[msg]; !ok && len(s.errs) >= maxErrorKinds {
			msg = "other errors"
		}
		s.errs[msg]++
	}
	s.c.add(&o.counts)
	for len(s.seconds) <= sec {
		s.seconds = append(s.seconds, Second{})
	}
	ps := &s.seconds[sec]
	ps.Allowed, ps.Denied, ps.Errors = ps.Allowed+o.allowed, ps.Denied+o.denied, ps.Errors+o.errors
}

// Latency summarises the answered decisions' latency in milliseconds, an open loop's from
// the intended send time (no coordinated omission).
type Latency struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// Band is one bar of the latency histogram: Count decisions took up to UpToMS.
type Band struct {
	UpToMS float64 `json:"le_ms"`
	Count  int64   `json:"count"`
}

func usToMS(v int64) float64 { return float64(v) / 1e3 }

func latencyOf(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Min: usToMS(h.Min()), Mean: math.Round(h.Mean()) / 1e3,
		P50: usToMS(h.ValueAtPercentile(50)), P90: usToMS(h.ValueAtPercentile(90)),
		P99: usToMS(h.ValueAtPercentile(99)), P999: usToMS(h.ValueAtPercentile(99.9)),
		Max: usToMS(h.Max()),
	}
}

// bandEdges are the bands' upper bounds in µs: 1-2-5 steps from 10 µs to 5 minutes, then the rest.
var bandEdges = func() []int64 {
	var e []int64
	for d := int64(10); d <= 5*60*1e6; d *= 10 {
		e = append(e, d, 2*d, 5*d)
	}
	return append(e, histMax)
}()

func bands(h *hdr.Histogram) []Band {
	if h.TotalCount() == 0 {
		return nil
	}
	counts := make([]int64, len(bandEdges))
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		i := sort.Search(len(bandEdges), func(i int) bool { return bandEdges[i] >= b.From })
		counts[min(i, len(counts)-1)] += b.Count
	}
	lo, hi := 0, len(counts)-1
	for lo < hi && counts[lo] == 0 {
		lo++
	}
	for hi > lo && counts[hi] == 0 {
		hi--
	}
	out := make([]Band, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		out = append(out, Band{UpToMS: usToMS(bandEdges[i]), Count: counts[i]})
	}
	return out
}
