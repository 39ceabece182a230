package bucket

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
