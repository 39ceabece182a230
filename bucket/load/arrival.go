package load

import (
	"math"
	"math/rand/v2"
	"time"
)

// Arrival is how requests arrive.
type Arrival string

const (
	// Closed is a closed loop: each worker sends its next request once the previous one is answered.
	Closed Arrival = "closed"
	// Constant is an open loop at a fixed rate: request i is due at i/rate.
	Constant Arrival = "constant"
	// Poisson is an open loop with exponentially distributed gaps around a mean rate.
	Poisson Arrival = "poisson"
)

// Arrivals lists the arrival modes.
var Arrivals = []Arrival{Closed, Constant, Poisson}

// schedule produces an open loop's due times as offsets from the start, in order, bursts
// included. Not safe for concurrent use.
type schedule struct {
	rate      float64
	n         int64   // steady arrivals produced (constant rate)
	t         float64 // Poisson: the next steady arrival's due time in seconds
	rng       *rand.Rand
	every     time.Duration
	size      int
	nextBurst time.Duration
	left      int // what is left of the burst under way
}

func newSchedule(a Arrival, rate float64, every time.Duration, size int, seed uint64) *schedule {
	s := &schedule{rate: rate, every: every, size: size, nextBurst: every}
	if a == Poisson {
		s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		s.t = s.rng.ExpFloat64() / rate
	}
	return s
}

// next returns the next due time; the steady stream goes first when a burst falls on the
// same instant.
func (s *schedule) next() time.Duration {
	if s.left > 0 {
		s.left--
		return s.nextBurst - s.every
	}
	steady := secs(float64(s.n) / s.rate)
	if s.rng != nil {
		steady = secs(s.t)
	}
	if s.every > 0 && s.size > 0 && s.nextBurst < steady {
		at := s.nextBurst
		s.left = s.size - 1
		s.nextBurst += s.every
		return at
	}
	s.n++
	if s.rng != nil {
		s.t += s.rng.ExpFloat64() / s.rate
	}
	return steady
}

func secs(f float64) time.Duration {
	if f >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(f * float64(time.Second))
}
