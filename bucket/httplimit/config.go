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
	failUnset  FailurePolicy = iota
	FailOpen                 // let requests through, unlimited
	FailClosed               // refuse them with Config.ClosedStatus; Retry-After says when Redis is next tried
	FailLocal                // decide them with in-process buckets (see Local): limits hold per instance
)

func (p FailurePolicy) String() string {
	return nameOf(int(p), "unset", "unset", "fail-open", "fail-closed", "fail-local")
}

func nameOf(i int, def string, names ...string) string {
	if i < 0 || i >= len(names) {
		return def
	}
	return names[i]
}

// Tier is one bucket every request is charged to, per partition.
type Tier struct {
	Name string // in keys and headers: letters, digits, '_', '-' and '.'
	Spec bucket.Spec
	// Scope, when set, splits the tier into a bucket per value (Routes.Pattern: per route).
	Scope func(*http.Request) string
	Cost  func(*http.Request) float64 // the tokens a request takes from this tier; nil: Config.Cost
}

// Config configures a Limiter.
type Config struct {
	// Partition names who a request is charged to (required); a request without an
	// identity is charged to "anonymous": end a FirstOf chain with ClientIP.
	Partition KeyFunc
	Tiers     []Tier                      // charged all or nothing; at least one
	Cost      func(*http.Request) float64 // tokens per tier without its own Cost (default 1)
	Prefix    string                      // starts every key (default "rl:")

	OnFailure    FailurePolicy // what happens when Redis is unreachable; required
	ClosedStatus int           // FailClosed's status: 503 (the default) or 429
	Breaker      Breaker
	Local        Local
	// Timeout bounds each Redis call (0: none but the request's); build the client with
	// ContextTimeoutEnabled and MaxRetries: -1, so a dropped connection is not taken twice.
	Timeout time.Duration

	Now        func() time.Time              // the clock (default time.Now)
	OnDecision func(*http.Request, Decision) // every decision, for logs and metrics
	OnError    func(*http.Request, error)    // every Redis error, before the policy answers
	OnBreaker  func(from, to BreakerState)   // every change of the breaker's state
}

// Source says what made a Decision.
type Source int

const (
	SourceRedis      Source = iota + 1 // the buckets in Redis
	SourceLocal                        // FailLocal's in-process buckets
	SourceFailOpen                     // FailOpen, no bucket consulted
	SourceFailClosed                   // FailClosed, no bucket consulted
	SourceRefused                      // never decidable: a cost above capacity (429) or a configuration error (500)
)

func (s Source) String() string {
	return nameOf(int(s), "unknown", "unknown", "redis", "local", "fail-open", "fail-closed", "refused")
}

// Decision is the Limiter's verdict on one request.
type Decision struct {
	Allowed   bool
	Status    int // a refused request's status (429, 503 or 500); 0 when allowed
	Source    Source
	Partition string
	Tiers     []bucket.Tier      // the buckets decided: names, keys, specs and costs
	Result    bucket.MultiResult // when a bucket decided (SourceRedis, SourceLocal)
	Err       error              // why Redis did not decide: its error, ErrCircuitOpen, a configuration error
}

// ErrCircuitOpen is a Decision's Err when the open breaker kept the request from Redis.
var ErrCircuitOpen = errors.New("httplimit: circuit breaker open: Redis not called")
