package load

import (
	"math"
	"math/rand/v2"
	"time"
)

// Arrival is how requests arrive.
type Arrival string

const (
	// Closed is a closed loop: each worker sends its next request as soon as the previous
	// one is answered, as fast as the server allows.
	Closed Arrival = "closed"
	// Constant is an open loop at a fixed rate: request i is due at i/rate.
	Constant Arrival = "constant"
	// Poisson is an open loop with exponentially distributed gaps around a mean rate.
	Poisson Arrival = "poisson"
)

// Arrivals lists the arrival modes.
var Arrivals = []Arrival{Closed, Constant, Poisson}

// schedule produces the intended send times of an open loop, as offsets from the start,
// in order. Bursts of BurstSize extra requests, all due at once, come every BurstEvery.
// It is not safe for concurrent use.
type schedule struct {
	rate float64
	// n counts the steady arrivals produced (constant rate); t is the next steady
	// arrival's due time in seconds (Poisson), drawn from rng.
	n   int64
	t   float64
	rng *rand.Rand
	// every and size shape the bursts; nextBurst is the due time of the next one and left
	// what is left of the burst under way.
	every     time.Duration
	size      int
	nextBurst time.Duration
	left      int
}

func newSchedule(a Arrival, rate float64, every time.Duration, size int, seed uint64) *schedule {
	s := &schedule{rate: rate, every: every, size: size, nextBurst: every}
	if a == Poisson {
		s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		s.t = s.rng.ExpFloat64() / rate
	}
	return s
}

// next returns the next due time. The steady stream goes first when a burst falls on the
// same instant.
func (s *schedule) next() time.Duration {
	if s.left > 0 {
		s.left--
		return s.nextBurst - s.every
	}
	steady := s.steadyAt()
	if s.every > 0 && s.size > 0 && s.nextBurst < steady {
		at := s.nextBurst
		s.left = s.size - 1
		s.nextBurst += s.every
		return at
	}
	s.advance()
	return steady
}

func (s *schedule) steadyAt() time.Duration {
	if s.rng != nil {
		return secs(s.t)
	}
	return secs(float64(s.n) / s.rate)
}

func (s *schedule) advance() {
	s.n++
	if s.rng != nil {
		s.t += s.rng.ExpFloat64() / s.rate
	}
}

func secs(f float64) time.Duration {
	if f >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(f * float64(time.Second))
}
