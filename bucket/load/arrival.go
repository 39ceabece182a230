package load

import (
	"context"
	"math"
	"math/rand/v2"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
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
// in order, bursts included. It is not safe for concurrent use.
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

// next returns the next due time; the steady stream goes first when a burst falls on the
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

// Schedule is the due times of an open loop's arrivals, for a caller that paces its own
// traffic (a demo, a test) as a load run does. Not safe for concurrent use.
type Schedule struct{ s *schedule }

// NewSchedule returns the schedule of an open loop: a Constant or Poisson arrival at rate
// per second (0 < rate <= MaxArrivalRate), with bursts when every and size are both > 0.
// The same seed gives the same Poisson schedule.
func NewSchedule(a Arrival, rate float64, every time.Duration, size int, seed uint64) (*Schedule, error) {
	c := Config{Key: "-", Spec: bucket.Spec{Capacity: 1, Rate: 1}, Cost: 1, Arrival: a, ArrivalRate: rate,
		BurstEvery: every, BurstSize: size}
	if a == Closed {
		return nil, invalid("a schedule needs an open loop (constant or poisson arrivals)")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Schedule{newSchedule(a, rate, every, size, seed)}, nil
}

// Next returns the next arrival's due time, as an offset from the start; never earlier
// than the previous one.
func (s *Schedule) Next() time.Duration { return s.s.next() }

// Pace calls fn at each due time of s from start, one call at a time, until ctx ends
// (its error is returned). Arrivals fn was too slow for are called at once, in order.
func Pace(ctx context.Context, s *Schedule, start time.Time, fn func()) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if wait := time.Until(start.Add(s.Next())); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-timer.C:
			}
		}
		fn()
	}
}
