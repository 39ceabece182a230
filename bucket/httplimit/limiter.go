package httplimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Limiter is the middleware. Build it with New; it is safe for concurrent use.
type Limiter struct {
	store   *bucket.Store
	cfg     Config
	policy  string // the RateLimit-Policy field value
	breaker *breaker
	local   *localBuckets
}

var tierName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

// New returns a Limiter deciding with store, once the configuration checks out.
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
		if !tierName().MatchString(t.Name) {
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

// Handler wraps next: an allowed request goes on to next, a refused one is answered here.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := l.Decide(r)
		setHeaders(w.Header(), l.policy, d.Result, l.cfg.Now())
		if d.Allowed {
			next.ServeHTTP(w, r)
			return
		}
		l.refuse(w, d)
	})
}

// Decide makes the decision for r without writing a response, calling OnDecision.
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
	if err == nil {
		l.breaker.done(probe, succeeded)
		d.Source, d.Result, d.Allowed = SourceRedis, res, res.Allowed
		if !res.Allowed {
			d.Status = http.StatusTooManyRequests
		}
		return d
	}
	// A caller's error, or the client going away, says nothing about Redis.
	callers := isCallerError(err)
	if callers || r.Context().Err() != nil {
		l.breaker.done(probe, neutral)
	} else {
		l.breaker.done(probe, failed)
	}
	if l.cfg.OnError != nil {
		l.cfg.OnError(r, err)
	}
	if callers {
		return refused(d, http.StatusInternalServerError, err)
	}
	return l.fallback(d, err)
}

// isCallerError reports errors that say nothing about Redis's health (500, breaker untouched).
func isCallerError(err error) bool {
	return errors.Is(err, bucket.ErrInvalid) || errors.Is(err, bucket.ErrWrongType) ||
		errors.Is(err, bucket.ErrForeign) || errors.Is(err, bucket.ErrNoSpec) ||
		errors.Is(err, bucket.ErrCrossSlot)
}

func refused(d Decision, status int, err error) Decision {
	d.Source, d.Status, d.Err = SourceRefused, status, err
	return d
}

func (l *Limiter) fallback(d Decision, err error) Decision {
	d.Err = err
	switch l.cfg.OnFailure {
	case FailOpen:
		d.Source, d.Allowed = SourceFailOpen, true
	case FailClosed:
		d.Source, d.Status = SourceFailClosed, l.cfg.ClosedStatus
	case FailLocal:
		tiers := slices.Clone(d.Tiers)
		for i := range tiers {
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
