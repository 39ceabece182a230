package httplimit

import (
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
	// Name names the tier in keys and headers: letters, digits, '_', '-' and '.'.
	Name string
	// Spec is the bucket's capacity and refill rate.
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
	// Tiers are the buckets each request is charged to, all or nothing. At least one.
	Tiers []Tier
	// Cost is the tokens a request takes from each tier without its own Cost (default 1).
	// A Routes table's Cost method fits here.
	Cost func(*http.Request) float64
	// Prefix starts every key (default "rl:").
	Prefix string

	// OnFailure is what happens when Redis is unreachable. Required: there is no default.
	OnFailure FailurePolicy
	// ClosedStatus is FailClosed's status: http.StatusServiceUnavailable (the default) or
	// http.StatusTooManyRequests.
	ClosedStatus int
	Breaker      Breaker
	Local        Local
	// Timeout bounds each Redis call through its context (0: the request's context alone);
	// build the client with ContextTimeoutEnabled: true, or go-redis ignores it, and with
	// MaxRetries: -1, so a dropped connection is not retried into a second take.
	Timeout time.Duration

	// Now is the clock for X-RateLimit-Reset, the breaker and the local buckets (default
	// time.Now).
	Now func() time.Time
	// OnDecision, when set, is called with every decision, for logs and metrics.
	OnDecision func(*http.Request, Decision)
	// OnError, when set, is called with every error of a Redis call (not for decisions the
	// open breaker kept from Redis), before the failure policy answers.
	OnError func(*http.Request, error)
	// OnBreaker, when set, is called on every change of the breaker's state.
	OnBreaker func(from, to BreakerState)
}
