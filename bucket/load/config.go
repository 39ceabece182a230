package load

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Bounds of a run: DefaultDuration without a duration or request count, MaxDuration at most.
const (
	DefaultDuration = 10 * time.Second
	MaxDuration     = 10 * time.Minute
	MaxRequests     = 100_000_000
	MaxConcurrency  = 4096
	MaxPipeline     = 1024      // decisions per round trip
	MaxArrivalRate  = 1_000_000 // an open loop's mean arrival rate, per second
)

// KeyFor is the Redis key a load run on name uses: bucketctl:load:name, or name itself when raw.
func KeyFor(name string, raw bool) string {
	if raw {
		return name
	}
	return "bucketctl:load:" + name
}

// CompareKey is the fresh key of one strategy in a comparison on key.
func CompareKey(key string, s Strategy) string { return key + ":" + string(s) }

// Config says what a run does.
type Config struct {
	Key         string // used as is (see KeyFor)
	Spec        bucket.Spec
	StoredSpec  bool    // Spec is the existing bucket's own, left as stored (PlanFor)
	Cost        float64 // tokens per request (> 0)
	Strategy    Strategy
	Concurrency int // workers
	Pipeline    int // decisions per round trip (lua strategy, closed loop)
	// Duration and Requests bound the run (0: no such bound).
	Duration time.Duration
	Requests int64
	// An open loop's arrivals: mean rate per second, and bursts of BurstSize all due at once.
	Arrival      Arrival
	ArrivalRate  float64
	BurstEvery   time.Duration
	BurstSize    int
	WatchRetries int    // 0: DefaultWatchRetries
	Seed         uint64 // of the Poisson arrivals (0: a fixed default)
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", bucket.ErrInvalid, fmt.Sprintf(format, a...))
}

func oneOf[T ~string](what string, v T, all []T) error {
	if slices.Contains(all, v) {
		return nil
	}
	names := Names(all)
	last := len(names) - 1
	return invalid("%s %q: must be %s or %s", what, v, strings.Join(names[:last], ", "), names[last])
}

// Names are the string values of named modes (Strategies, Arrivals).
func Names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func (c Config) withDefaults() Config {
	c.Strategy, c.Arrival = cmp.Or(c.Strategy, Lua), cmp.Or(c.Arrival, Closed)
	c.Concurrency, c.Pipeline = cmp.Or(c.Concurrency, 1), cmp.Or(c.Pipeline, 1)
	if c.Duration == 0 {
		c.Duration = DefaultDuration
		if c.Requests > 0 {
			c.Duration = MaxDuration
		}
	}
	c.WatchRetries, c.Seed = cmp.Or(c.WatchRetries, DefaultWatchRetries), cmp.Or(c.Seed, 1)
	return c
}

// Validate checks the config; its errors wrap bucket.ErrInvalid.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.Key == "" {
		return invalid("empty key")
	}
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	if math.IsNaN(c.Cost) || c.Cost <= 0 || c.Cost > c.Spec.Capacity {
		return invalid("cost %v: must be > 0 and at most the capacity %v", c.Cost, c.Spec.Capacity)
	}
	if err := oneOf("strategy", c.Strategy, Strategies); err != nil {
		return err
	}
	if c.Concurrency < 1 || c.Concurrency > MaxConcurrency {
		return invalid("concurrency %d: must be 1..%d", c.Concurrency, MaxConcurrency)
	}
	if c.Pipeline < 1 || c.Pipeline > MaxPipeline {
		return invalid("pipeline %d: must be 1..%d", c.Pipeline, MaxPipeline)
	}
	if c.Pipeline > 1 && (c.Strategy != Lua || c.Arrival != Closed) {
		return invalid("pipeline %d: batching is for closed-loop throughput runs of the lua strategy", c.Pipeline)
	}
	if c.Duration < 0 || c.Duration > MaxDuration {
		return invalid("duration %v: must be at most %v", c.Duration, MaxDuration)
	}
	if c.Requests < 0 || c.Requests > MaxRequests {
		return invalid("requests %d: must be 0..%d", c.Requests, MaxRequests)
	}
	if c.WatchRetries < 0 {
		return invalid("watch retries %d: must be >= 0", c.WatchRetries)
	}
	if err := oneOf("arrival", c.Arrival, Arrivals); err != nil {
		return err
	}
	switch c.Arrival {
	case Closed:
		if c.ArrivalRate != 0 || c.BurstEvery != 0 || c.BurstSize != 0 {
			return invalid("an arrival rate and bursts need an open loop (constant or poisson arrivals)")
		}
	case Constant, Poisson:
		if math.IsNaN(c.ArrivalRate) || c.ArrivalRate <= 0 || c.ArrivalRate > MaxArrivalRate {
			return invalid("arrival rate %v: %s arrivals need a rate in (0, %d] per second", c.ArrivalRate, c.Arrival, MaxArrivalRate)
		}
		if (c.BurstEvery > 0) != (c.BurstSize > 0) || c.BurstEvery < 0 || c.BurstSize < 0 {
			return invalid("bursts need both an interval > 0 and a size > 0")
		}
		if c.BurstEvery > 0 && float64(c.BurstSize)/c.BurstEvery.Seconds() > MaxArrivalRate {
			return invalid("bursts of %d every %v exceed %d requests per second", c.BurstSize, c.BurstEvery, MaxArrivalRate)
		}
	}
	return nil
}

// Arrival is how requests arrive.
type Arrival string

const (
	Closed   Arrival = "closed"   // a worker sends its next request once the previous is answered
	Constant Arrival = "constant" // an open loop at a fixed rate: request i is due at i/rate
	Poisson  Arrival = "poisson"  // an open loop with exponential gaps around a mean rate
)

// Arrivals lists the arrival modes.
var Arrivals = []Arrival{Closed, Constant, Poisson}

// schedule produces an open loop's due times, bursts included, in order.
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

// next returns the next due time; the steady stream goes before a burst at the same instant.
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
