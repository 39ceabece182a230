package httplimit

import (
	"errors"

	"github.com/bucketctl/bucketctl/bucket"
)

// Source says what made a Decision.
type Source int

const (
	SourceRedis      Source = iota + 1 // the buckets in Redis
	SourceLocal                        // FailLocal's in-process buckets
	SourceFailOpen                     // FailOpen, no bucket consulted
	SourceFailClosed                   // FailClosed, no bucket consulted
	// SourceRefused: no bucket consulted, the request can never be decided: a cost above a
	// tier's capacity (429) or a configuration error (500).
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
	Allowed   bool
	Status    int // a refused request's status (429, 503 or 500); 0 when allowed
	Source    Source
	Partition string
	Tiers     []bucket.Tier      // the buckets decided: names, keys, specs and costs
	Result    bucket.MultiResult // when a bucket decided (SourceRedis, SourceLocal)
	// Err is why Redis did not decide: its error, ErrCircuitOpen, or a configuration error.
	Err error
}

// ErrCircuitOpen is a Decision's Err when the open breaker kept the request from Redis.
var ErrCircuitOpen = errors.New("httplimit: circuit breaker open: Redis not called")
