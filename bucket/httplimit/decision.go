package httplimit

import (
	"errors"

	"github.com/bucketctl/bucketctl/bucket"
)

// Source says what made a Decision.
type Source int

const (
	// SourceRedis: the buckets in Redis.
	SourceRedis Source = iota + 1
	// SourceLocal: FailLocal's in-process buckets.
	SourceLocal
	// SourceFailOpen: FailOpen, with no bucket consulted.
	SourceFailOpen
	// SourceFailClosed: FailClosed, with no bucket consulted.
	SourceFailClosed
	// SourceRefused: no bucket consulted because the request can never be decided: a cost
	// above a tier's capacity (429) or a configuration error (500).
	SourceRefused
)

func (s Source) String() string {
	switch s {
	case SourceRedis:
		return "redis"
	case SourceLocal:
		return "local"
	case SourceFailOpen:
		return "fail-open"
	case SourceFailClosed:
		return "fail-closed"
	case SourceRefused:
		return "refused"
	}
	return "unknown"
}

// Decision is the Limiter's verdict on one request.
type Decision struct {
	// Allowed says the request goes on to the handler.
	Allowed bool
	// Status is the status the middleware answers a refused request with (429, 503 or
	// 500); 0 when allowed.
	Status int
	Source Source
	// Partition is the partition the request was charged to.
	Partition string
	// Tiers are the buckets decided: names, keys, specs and costs.
	Tiers []bucket.Tier
	// Result holds the tiers' results when a bucket decided (SourceRedis, SourceLocal).
	Result bucket.MultiResult
	// Err is why Redis did not decide: its error, ErrCircuitOpen, or a configuration
	// error; nil for SourceRedis.
	Err error
}

// ErrCircuitOpen is a Decision's Err when the open breaker kept the request from Redis.
var ErrCircuitOpen = errors.New("httplimit: circuit breaker open: Redis not called")
