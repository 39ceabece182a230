package httplimit

import (
	"errors"
	"net/http"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// FailurePolicy is what the Limiter does when Redis cannot decide.
type FailurePolicy int

const (
	failUnset FailurePolicy = iota
	// FailOpen lets requests through, unlimited, while Redis is unreachable. An outage
	// then lifts every limit: choose it when availability matters more than protection.
	FailOpen
	// FailClosed refuses requests while Redis is unreachable, with Config.ClosedStatus
	// (503 by default, or 429). Retry-After says when Redis is next tried.
	FailClosed
	// FailLocal decides requests with in-process token buckets (see Local) while Redis is
	// unreachable: limits keep holding per instance, though not across instances.
	FailLocal
)

func (p FailurePolicy) String() string {
	switch p {
	case FailOpen:
		return "fail-open"
	case FailClosed:
		return "fail-closed"
	case FailLocal:
		return "fail-local"
	}
	return "unset"
}

// Tier is one bucket every request is charged to, per partition.
type Tier struct {
	Name string // in keys and headers: letters, digits, '_', '-' and '.'
	Spec bucket.Spec
	// Scope, when set, splits the tier into a bucket per scope value within the partition,
	// e.g. Routes.Pattern for a bucket per route. Keep its values few: each is a key.
	Scope func(*http.Request) string
	// Cost, when set, is the tokens a request takes from this tier; else Config.Cost.
	Cost func(*http.Request) float64
}

// Config configures a Limiter.
type Config struct {
	// Partition names who a request is charged to. Required. A request it finds no
	// identity for is charged to the shared partition "anonymous": end a FirstOf chain
	// with ClientIP to avoid that.
	Partition KeyFunc
	Tiers     []Tier // charged all or nothing; at least one
	// Cost is the tokens a request takes from each tier without its own Cost (default 1),
	// e.g. a Routes table's Cost.
	Cost   func(*http.Request) float64
	Prefix string // starts every key (default "rl:")

	OnFailure FailurePolicy // what happens when Redis is unreachable; required
	// ClosedStatus is FailClosed's status: http.StatusServiceUnavailable (the default) or
	// http.StatusTooManyRequests.
	ClosedStatus int
	Breaker      Breaker
	Local        Local
	// Timeout bounds each Redis call through its context (0: the request's context alone);
	// build the client with ContextTimeoutEnabled: true, or go-redis ignores it, and with
	// MaxRetries: -1, so a dropped connection is not retried into a second take.
	Timeout time.Duration

	Now        func() time.Time              // the clock (default time.Now)
	OnDecision func(*http.Request, Decision) // every decision, for logs and metrics
	// OnError is called with every error of a Redis call, before the failure policy answers.
	OnError   func(*http.Request, error)
	OnBreaker func(from, to BreakerState) // every change of the breaker's state
}

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
