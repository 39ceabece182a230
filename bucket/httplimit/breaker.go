package httplimit

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerState is the state of the Limiter's circuit breaker around Redis.
type BreakerState int

const (
	Closed   BreakerState = iota // every decision calls Redis
	Open                         // Redis failed Threshold times in a row: the policy decides until the cool-down ends
	HalfOpen                     // one request at a time probes Redis: success closes, failure opens again
)

func (s BreakerState) String() string {
	return nameOf(int(s), "unknown", "closed", "open", "half-open")
}

// Breaker configures the circuit breaker.
type Breaker struct {
	Threshold int           // consecutive Redis errors that open the breaker (default 5)
	Cooldown  time.Duration // how long an open breaker waits before a probe (default 5 s)
}

type breaker struct {
	Breaker
	now    func() time.Time
	notify func(from, to BreakerState) // may be nil

	healthy atomic.Bool // Closed with no failure counted: acquire and a success take no lock

	mu      sync.Mutex
	state   BreakerState
	fails   int
	until   time.Time // Open: when the cool-down ends
	probing bool      // HalfOpen: a probe is in flight
	pending []func()  // notifications to run once mu is released
}

// acquire says whether this decision may call Redis (probe: the half-open probe); done
// settles every call it allowed.
func (b *breaker) acquire() (call, probe bool) {
	if b.healthy.Load() {
		return true, false
	}
	b.mu.Lock()
	defer b.unlock()
	switch b.state {
	case Open:
		if b.now().Before(b.until) {
			return false, false
		}
		b.set(HalfOpen)
		fallthrough
	case HalfOpen:
		if b.probing {
			return false, false
		}
		b.probing = true
		return true, true
	}
	return true, false
}

func (b *breaker) retryIn() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Open {
		return 0
	}
	return max(0, b.until.Sub(b.now()))
}

type outcome int // of a call to Redis

const (
	succeeded outcome = iota // Redis answered
	failed                   // Redis was unreachable or timed out
	neutral                  // no verdict on Redis (a caller's error, a canceled request)
)

func (b *breaker) done(probe bool, o outcome) {
	if !probe && o != failed && b.healthy.Load() {
		return // nothing to change
	}
	b.mu.Lock()
	if probe {
		b.probing = false
	}
	switch o {
	case succeeded:
		b.fails = 0
		if b.state != Closed {
			b.set(Closed)
		}
	case failed:
		b.fails++
		if b.state == HalfOpen || (b.state == Closed && b.fails >= b.Threshold) {
			b.until = b.now().Add(b.Cooldown)
			b.set(Open)
		}
	}
	b.unlock()
}

// set changes state under b.mu; unlock notifies once b.mu is released.
func (b *breaker) set(to BreakerState) {
	from := b.state
	b.state = to
	if b.notify != nil {
		b.pending = append(b.pending, func() { b.notify(from, to) })
	}
}

func (b *breaker) unlock() {
	b.healthy.Store(b.state == Closed && b.fails == 0)
	calls := b.pending
	b.pending = nil
	b.mu.Unlock()
	for _, f := range calls {
		f()
	}
}

func (b *breaker) current() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}
