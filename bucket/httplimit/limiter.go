// Package httplimit is net/http middleware that rate-limits requests with bucketctl's token
// buckets in Redis: one or several tiers per request (a user's overall bucket, a bucket per
// route, …) decided all or nothing in one round trip with bucket.Store.TakeAll, rate-limit
// headers on every response, and an explicit policy with a circuit breaker for when Redis
// is unreachable.
//
// # Keys
//
// Each request is charged to a partition, named by a KeyFunc (UserHeader, UserContext,
// APIKeyHeader, ClientIP, or FirstOf several). The bucket of tier T for partition P is
// Prefix + "{P}:T", with ":" + Scope(r) appended when the tier has a Scope: for example
// rl:{user:42}:user and rl:{user:42}:route:POST /reports. The braces make P the key's hash
// tag, so all tiers of a request share one Redis Cluster slot, as one script call needs.
//
// # Headers
//
// Every response carries the fields of the IETF draft "RateLimit header fields for HTTP",
// draft-ietf-httpapi-ratelimit-headers-11 (23 May 2026), one list item per tier, named
// after the tier:
//
//	RateLimit-Policy: "user";q=100;w=10, "route";q=20;w=60
//	RateLimit: "user";r=97;t=1, "route";r=19;t=3
//
// q is the tier's capacity (whole tokens), w the seconds an empty bucket takes to refill
// fully (capacity / rate, rounded up), r the whole tokens remaining after this request,
// and t the seconds until the bucket is full again (rounded up). A token bucket refills
// continuously, so more than r tokens become available before t: t is when the client's
// quota is whole again, not a window boundary. On a 429 the Retry-After field, which the
// draft says clients must prefer to t, gives the earliest useful retry.
//
// The legacy fields describe the tier closest to denying (on a 429, the tier that needs the
// longest wait; otherwise the one with the fewest whole tokens left):
//
//	X-RateLimit-Limit      its capacity in tokens
//	X-RateLimit-Remaining  its tokens left after this request, rounded down
//	X-RateLimit-Reset      Unix time in seconds, rounded up, when it is full again
//
// A 429 adds Retry-After: the seconds, rounded up, until every tier holds this request's
// cost again, so never before a retry can succeed; and a small application/problem+json
// body of the draft's "quota-exceeded" problem type listing the tiers that lacked their
// cost. When no bucket was consulted (FailOpen, FailClosed) only RateLimit-Policy is sent.
//
// # When Redis is unreachable
//
// Config.OnFailure must be chosen, there is no default: FailOpen lets requests through
// unlimited, FailClosed refuses them (503 by default, or 429), FailLocal decides them with
// in-process buckets per key (the same model, bounded in size). A circuit breaker opens
// after Breaker.Threshold consecutive Redis errors: for Breaker.Cooldown no request calls
// Redis and the failure policy answers at once; then a single probe request calls Redis
// and closes the breaker when it succeeds. Errors that say nothing about Redis's health
// (a key that is not a native bucket, keys in different Cluster slots) never open it and
// answer 500.
package httplimit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
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
	// FailClosed refuses requests while Redis is unreachable, with Config.ClosedStatus:
	// 503 Service Unavailable by default (the server's fault, and clients and monitors
	// treat it so), or 429 Too Many Requests. Retry-After says when Redis is next tried.
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
	// Breaker configures the circuit breaker.
	Breaker Breaker
	// Local configures FailLocal's in-process buckets.
	Local Local
	// Timeout bounds each Redis call through its context (0: the request's context
	// alone). go-redis honours context deadlines only when the client is built with
	// ContextTimeoutEnabled: true; otherwise its ReadTimeout and WriteTimeout (3 s by
	// default) bound the call. Build the client with MaxRetries: -1 too, so a dropped
	// connection is not retried into a second take.
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

// Limiter is the middleware. Build it with New; it is safe for concurrent use.
type Limiter struct {
	store   *bucket.Store
	cfg     Config
	policy  string // the RateLimit-Policy field value
	breaker *breaker
	local   *localBuckets
}

var tierName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// New returns a Limiter deciding with store. It checks the configuration and fills in the
// defaults.
func New(store *bucket.Store, cfg Config) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("httplimit: no Store")
	}
	if cfg.Partition == nil {
		return nil, errors.New("httplimit: Config.Partition is required (e.g. FirstOf(UserHeader(\"X-User-ID\"), ClientIP()))")
	}
	if len(cfg.Tiers) == 0 {
		return nil, errors.New("httplimit: Config.Tiers needs at least one tier")
	}
	seen := map[string]bool{}
	policy := make([]string, len(cfg.Tiers))
	for i, t := range cfg.Tiers {
		if !tierName.MatchString(t.Name) {
			return nil, fmt.Errorf("httplimit: tier %d: name %q: use letters, digits, '_', '-' and '.'", i+1, t.Name)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("httplimit: two tiers are named %q", t.Name)
		}
		seen[t.Name] = true
		if err := t.Spec.Validate(); err != nil {
			return nil, fmt.Errorf("httplimit: tier %q: %w", t.Name, err)
		}
		policy[i] = policyItem(t.Name, t.Spec)
	}
	switch cfg.OnFailure {
	case FailOpen, FailClosed, FailLocal:
	default:
		return nil, errors.New("httplimit: Config.OnFailure must be FailOpen, FailClosed or FailLocal: choose what happens while Redis is unreachable")
	}
	switch cfg.ClosedStatus {
	case 0:
		cfg.ClosedStatus = http.StatusServiceUnavailable
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
	default:
		return nil, fmt.Errorf("httplimit: ClosedStatus %d: want 503 or 429", cfg.ClosedStatus)
	}
	for _, f := range []struct {
		name     string
		negative bool
	}{{"Breaker.Threshold", cfg.Breaker.Threshold < 0}, {"Breaker.Cooldown", cfg.Breaker.Cooldown < 0},
		{"Local.MaxKeys", cfg.Local.MaxKeys < 0}, {"Timeout", cfg.Timeout < 0}} {
		if f.negative {
			return nil, fmt.Errorf("httplimit: %s is negative: give a positive value, or 0 for the default", f.name)
		}
	}
	if strings.ContainsAny(cfg.Prefix, "{}") {
		return nil, fmt.Errorf("httplimit: Prefix %q holds a brace: Redis Cluster would hash every partition by it onto one slot; drop the braces", cfg.Prefix)
	}
	if cfg.Local.Scale < 0 || math.IsInf(cfg.Local.Scale, 0) || math.IsNaN(cfg.Local.Scale) {
		return nil, fmt.Errorf("httplimit: Local.Scale %v: want a positive finite number", cfg.Local.Scale)
	}
	cfg.Breaker.Threshold = cmp.Or(cfg.Breaker.Threshold, 5)
	cfg.Breaker.Cooldown = cmp.Or(cfg.Breaker.Cooldown, 5*time.Second)
	cfg.Local.MaxKeys = cmp.Or(cfg.Local.MaxKeys, 10000)
	cfg.Local.Scale = cmp.Or(cfg.Local.Scale, 1)
	cfg.Prefix = cmp.Or(cfg.Prefix, "rl:")
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Cost == nil {
		cfg.Cost = func(*http.Request) float64 { return 1 }
	}
	l := &Limiter{store: store, cfg: cfg, policy: strings.Join(policy, ", "),
		breaker: &breaker{Breaker: cfg.Breaker, now: cfg.Now, notify: cfg.OnBreaker}}
	if cfg.OnFailure == FailLocal {
		l.local = newLocalBuckets(cfg.Local.MaxKeys)
	}
	return l, nil
}

// BreakerState returns the circuit breaker's state.
func (l *Limiter) BreakerState() BreakerState { return l.breaker.current() }

// Handler wraps next: an allowed request goes on to next, a refused one gets its status,
// headers and body here. Every response carries the rate-limit headers.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := l.Decide(r)
		l.writeHeaders(w.Header(), d)
		if d.Allowed {
			next.ServeHTTP(w, r)
			return
		}
		l.refuse(w, d)
	})
}

// Decide makes the decision for r, calling OnDecision (and OnError), without writing a
// response: for servers that answer refusals themselves.
func (l *Limiter) Decide(r *http.Request) Decision {
	d := l.decide(r)
	if l.cfg.OnDecision != nil {
		l.cfg.OnDecision(r, d)
	}
	return d
}

func (l *Limiter) decide(r *http.Request) Decision {
	id, ok := l.cfg.Partition(r)
	if !ok {
		id = "anonymous"
	}
	id = partitionID(id)
	d := Decision{Partition: id, Tiers: make([]bucket.Tier, len(l.cfg.Tiers))}
	defCost, haveDef := 0.0, false // Config.Cost, asked once per request at most
	for i, t := range l.cfg.Tiers {
		key := l.cfg.Prefix + "{" + id + "}:" + t.Name
		if t.Scope != nil {
			if s := t.Scope(r); s != "" {
				key += ":" + s
			}
		}
		var cost float64
		switch {
		case t.Cost != nil:
			cost = t.Cost(r)
		case !haveDef:
			defCost, haveDef = l.cfg.Cost(r), true
			fallthrough
		default:
			cost = defCost
		}
		d.Tiers[i] = bucket.Tier{Name: t.Name, Key: key, Spec: t.Spec, Cost: cost}
	}
	for _, t := range d.Tiers {
		if !validCost(t.Cost) {
			return refused(d, http.StatusInternalServerError, fmt.Errorf("httplimit: tier %q: cost %v: %w", t.Name, t.Cost, bucket.ErrInvalid))
		}
		if err := t.Spec.ValidateCost(t.Cost); err != nil { // above capacity: never allowed
			return refused(d, http.StatusTooManyRequests, fmt.Errorf("httplimit: tier %q: %w", t.Name, err))
		}
	}

	call, probe := l.breaker.acquire()
	if !call {
		return l.fallback(d, ErrCircuitOpen)
	}
	ctx := r.Context()
	if l.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.cfg.Timeout)
		defer cancel()
	}
	res, err := l.store.TakeAll(ctx, d.Tiers)
	switch {
	case err == nil:
		l.breaker.done(probe, succeeded)
		d.Source, d.Result, d.Allowed = SourceRedis, res, res.Allowed
		if !res.Allowed {
			d.Status = http.StatusTooManyRequests
		}
		return d
	case isCallerError(err):
		l.breaker.done(probe, neutral)
		l.reportError(r, err)
		return refused(d, http.StatusInternalServerError, err)
	case r.Context().Err() != nil:
		// The client went away: that says nothing about Redis.
		l.breaker.done(probe, neutral)
	default:
		l.breaker.done(probe, failed)
	}
	l.reportError(r, err)
	return l.fallback(d, err)
}

// isCallerError reports errors that say nothing about Redis's health.
func isCallerError(err error) bool {
	return errors.Is(err, bucket.ErrInvalid) || errors.Is(err, bucket.ErrWrongType) ||
		errors.Is(err, bucket.ErrForeign) || errors.Is(err, bucket.ErrNoSpec) ||
		errors.Is(err, bucket.ErrCrossSlot)
}

func (l *Limiter) reportError(r *http.Request, err error) {
	if l.cfg.OnError != nil {
		l.cfg.OnError(r, err)
	}
}

func refused(d Decision, status int, err error) Decision {
	d.Source, d.Status, d.Err = SourceRefused, status, err
	return d
}

// fallback applies the failure policy.
func (l *Limiter) fallback(d Decision, err error) Decision {
	d.Err = err
	switch l.cfg.OnFailure {
	case FailOpen:
		d.Source, d.Allowed = SourceFailOpen, true
	case FailClosed:
		d.Source, d.Status = SourceFailClosed, l.cfg.ClosedStatus
	case FailLocal:
		tiers := make([]bucket.Tier, len(d.Tiers))
		copy(tiers, d.Tiers)
		for i := range tiers {
			// A cost Redis would allow must stay possible locally (it is below capacity,
			// checked above): the local share holds at least one request's cost.
			tiers[i].Spec.Capacity = max(tiers[i].Spec.Capacity*l.cfg.Local.Scale, tiers[i].Cost)
			tiers[i].Spec.Rate *= l.cfg.Local.Scale
		}
		d.Source = SourceLocal
		d.Result = l.local.takeAll(tiers, l.cfg.Now().UnixMicro())
		d.Allowed = d.Result.Allowed
		if !d.Allowed {
			d.Status = http.StatusTooManyRequests
		}
	}
	return d
}

// writeHeaders sets the rate-limit fields described in the package documentation.
func (l *Limiter) writeHeaders(h http.Header, d Decision) {
	setHeaders(h, l.policy, d.Result, l.cfg.Now())
}

func policyItem(name string, spec bucket.Spec) string {
	return fmt.Sprintf("%q;q=%d;w=%d", name, int64(spec.Capacity), max(1, ceilSeconds(spec.Wait(0, spec.Capacity))))
}

func setHeaders(h http.Header, policy string, m bucket.MultiResult, now time.Time) {
	h.Set("RateLimit-Policy", policy)
	tiers := m.Tiers
	if len(tiers) == 0 {
		return
	}
	items := make([]string, len(tiers))
	for i, t := range tiers {
		items[i] = fmt.Sprintf("%q;r=%d;t=%d", t.Name, int64(t.Remaining), ceilSeconds(t.ResetAfter))
	}
	h.Set("RateLimit", strings.Join(items, ", "))
	b := closest(m)
	h.Set("X-RateLimit-Limit", strconv.FormatFloat(b.Spec.Capacity, 'f', -1, 64))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(int64(b.Remaining), 10))
	full := now.Add(b.ResetAfter)
	secs := full.Unix()
	if full.Nanosecond() > 0 {
		secs++
	}
	h.Set("X-RateLimit-Reset", strconv.FormatInt(secs, 10))
}

// Headers returns the fields the middleware sends for a decision r of the one-bucket
// policy name taken at now: RateLimit-Policy, RateLimit, the X-RateLimit-* fields, and
// Retry-After (seconds, rounded up) when r was denied and can ever succeed.
func Headers(name string, r bucket.Result, now time.Time) http.Header {
	h := http.Header{}
	m := bucket.MultiResult{Allowed: r.Allowed, Denied: -1, Tiers: []bucket.TierResult{{Name: name, Result: r}}}
	if !r.Allowed {
		m.Denied = 0
	}
	setHeaders(h, policyItem(name, r.Spec), m, now)
	if !r.Allowed && r.RetryAfter >= 0 {
		h.Set("Retry-After", strconv.FormatInt(max(1, ceilSeconds(r.RetryAfter)), 10))
	}
	return h
}

// closest is the tier the legacy headers describe: on a denied decision the one needing
// the longest wait, else the one with the fewest whole tokens left (the longer reset on a
// tie).
func closest(m bucket.MultiResult) bucket.TierResult {
	b := m.Tiers[0]
	for _, t := range m.Tiers[1:] {
		if !m.Allowed {
			if t.RetryAfter < 0 || (b.RetryAfter >= 0 && t.RetryAfter > b.RetryAfter) {
				b = t
			}
			continue
		}
		tr, br := math.Floor(t.Remaining), math.Floor(b.Remaining)
		if tr < br || (tr == br && t.ResetAfter > b.ResetAfter) {
			b = t
		}
	}
	return b
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// problem is the application/problem+json body of a refusal.
type problem struct {
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	Status     int      `json:"status"`
	Detail     string   `json:"detail,omitempty"`
	Violated   []string `json:"violated-policies,omitempty"`
	RetryAfter *int64   `json:"retry-after,omitempty"`
}

// quotaExceeded is the draft's problem type for a request over its quota.
const quotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"

func (l *Limiter) refuse(w http.ResponseWriter, d Decision) {
	p := problem{Type: "about:blank", Title: http.StatusText(d.Status), Status: d.Status}
	switch {
	case d.Source == SourceRedis || d.Source == SourceLocal:
		p.Type, p.Detail = quotaExceeded, "rate limit exceeded"
		for _, t := range d.Result.Tiers {
			if !t.Allowed {
				p.Violated = append(p.Violated, t.Name)
			}
		}
		if wait := d.Result.RetryAfter(); wait >= 0 {
			s := ceilSeconds(wait)
			p.RetryAfter = &s
		} else {
			p.Detail = "the request costs more than a tier's capacity and can never be allowed"
		}
	case d.Source == SourceFailClosed:
		s := max(1, ceilSeconds(l.breaker.retryIn()))
		p.RetryAfter, p.Detail = &s, "rate limiter unavailable"
	case d.Status == http.StatusTooManyRequests:
		p.Type, p.Detail = quotaExceeded, "the request costs more than a tier's capacity and can never be allowed"
		for _, t := range d.Tiers {
			if t.Cost > t.Spec.Capacity {
				p.Violated = append(p.Violated, t.Name)
			}
		}
	default:
		p.Detail = "rate limiter misconfigured"
	}
	if p.RetryAfter != nil {
		w.Header().Set("Retry-After", strconv.FormatInt(*p.RetryAfter, 10))
	}
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(d.Status)
	_, _ = w.Write(append(body, '\n'))
}
