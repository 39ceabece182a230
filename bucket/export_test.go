package bucket

import (
	"math"
	"time"
)

// Queued is the number of Takes waiting for a lane of s (tests only).
func Queued(s *Store) int {
	if s.co == nil {
		return 0
	}
	s.co.mu.Lock()
	defer s.co.mu.Unlock()
	return len(s.co.queue)
}

// StoredRanges are the ranges of stored values the prelude must share: tokens, time (µs),
// counters and the refill time of a spec (s).
func StoredRanges() []float64 {
	return []float64{maxTokens, maxTime, maxCounter, maxRefill.Seconds()}
}

// Internals the external tests check directly.
var (
	DetectGCRA      = detectGCRA
	DetectHash      = detectHash
	GCRALayouts     = gcraLayouts
	GCRAState       = gcraState
	NumberOverflows = numberOverflows
	NativeReply     = nativeResult
	TokensUsed      = tokensUsed
	RedisRateSpec   = redisRateSpec
	ThrottledSpec   = throttledSpec
)

type (
	GCRAFit     = gcraFit
	GCRAReading = gcraReading
	GCRAWrite   = gcraWrite
)

const (
	NotGCRA   = notGCRA
	MaybeGCRA = maybeGCRA
	SureGCRA  = sureGCRA
)

// Helpers only the tests use.

// CounterForms lists the counter forms, in the order they are tried.
func CounterForms() []CounterForm { return append([]CounterForm(nil), counterForms...) }

func (f gcraFit) String() string {
	switch f {
	case sureGCRA:
		return "sure"
	case maybeGCRA:
		return "maybe"
	}
	return "no"
}

// gcraLayouts are the gcra presets, in the order detection tries them.
func gcraLayouts() []Layout { return presetsOf(GCRA) }

// AheadOfServer reports whether the stored TAT is beyond anything the library could
// have written with the server's clock and this spec.
func (r gcraReading) AheadOfServer() bool { return r.Ahead > 0 }

// redisRateSpec is the spec of a redis_rate Limit{Rate, Burst, Period}.
func redisRateSpec(rate, burst int, period time.Duration) Spec {
	return Spec{Capacity: float64(burst), Rate: float64(rate) / period.Seconds()}
}

// throttledSpec is the spec of a throttled RateQuota{PerDuration(count, period), maxBurst}:
// capacity maxBurst+1, one token per period/count (truncated to whole nanoseconds).
func throttledSpec(maxBurst, count int, period time.Duration) Spec {
	return Spec{Capacity: float64(maxBurst + 1), Rate: 1e9 / float64(period/time.Duration(count))}
}

// numberOverflows reports whether s has the grammar's form but overflows a float (1e999):
// in a bucket's field such a value makes the bucket corrupt rather than foreign.
func numberOverflows(s string) bool {
	v, form := parseNumberForm(s)
	return form && math.IsInf(v, 0)
}
