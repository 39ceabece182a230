package load

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Bounds of a run.
const (
	// DefaultDuration bounds a run given neither a duration nor a request count.
	DefaultDuration = 10 * time.Second
	// MaxDuration is the hard cap of every run, also one bounded by a request count.
	MaxDuration = 10 * time.Minute
	// MaxRequests caps a run's request count.
	MaxRequests = 100_000_000
	// MaxConcurrency caps the workers; MaxPipeline the decisions per round trip.
	MaxConcurrency = 4096
	MaxPipeline    = 1024
	// MaxArrivalRate caps an open loop's mean arrival rate (requests per second).
	MaxArrivalRate = 1_000_000
)

// KeyPrefix is where load runs put their buckets unless told to use a key as given, so a
// load test cannot hit a production bucket by a slip of the keyboard.
const KeyPrefix = "bucketctl:load:"

// KeyFor is the Redis key a load run on name uses: KeyPrefix+name, or name itself when raw.
func KeyFor(name string, raw bool) string {
	if raw {
		return name
	}
	return KeyPrefix + name
}

// CompareKey is the fresh key of one strategy in a comparison on key.
func CompareKey(key string, s Strategy) string { return key + ":" + string(s) }

// Config says what a run does.
type Config struct {
	// Key is the Redis key, used as is (see KeyFor).
	Key  string
	Spec bucket.Spec
	// StoredSpec says Spec is the existing bucket's own (see PlanFor): the decisions
	// leave it as stored.
	StoredSpec bool
	// Cost is the tokens each request takes (> 0).
	Cost     float64
	Strategy Strategy
	// Concurrency is the number of workers, each with its own connection at a time.
	Concurrency int
	// Pipeline is the decisions each round trip carries (lua strategy, closed loop).
	Pipeline int
	// Duration bounds the run in time; Requests in requests (0: no such bound). With
	// neither, the run lasts DefaultDuration; with Requests alone, at most MaxDuration. A
	// closed loop's duration runs from the first answer, an open loop's from the start.
	Duration time.Duration
	Requests int64
	// Arrival is the arrival mode; ArrivalRate the mean rate of an open loop (per second).
	Arrival     Arrival
	ArrivalRate float64
	// BurstEvery and BurstSize add bursts of BurstSize requests, all due at once, every
	// BurstEvery to an open loop.
	BurstEvery time.Duration
	BurstSize  int
	// WatchRetries bounds the retries of a watch decision (0: DefaultWatchRetries).
	WatchRetries int
	// Seed seeds the Poisson arrivals (0: a fixed default, so runs are repeatable).
	Seed uint64
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", bucket.ErrInvalid, fmt.Sprintf(format, a...))
}

// oneOf is nil when v is one of all, else the error that lists them: `strategy "x": must
// be lua, multi or watch`.
func oneOf[T ~string](what string, v T, all []T) error {
	if slices.Contains(all, v) {
		return nil
	}
	names := make([]string, len(all))
	for i, a := range all {
		names[i] = string(a)
	}
	last := len(names) - 1
	return invalid("%s %q: must be %s or %s", what, v, strings.Join(names[:last], ", "), names[last])
}

func (c Config) withDefaults() Config {
	if c.Strategy == "" {
		c.Strategy = Lua
	}
	if c.Arrival == "" {
		c.Arrival = Closed
	}
	if c.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Pipeline == 0 {
		c.Pipeline = 1
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
		if c.Requests > 0 {
			c.Duration = MaxDuration
		}
	}
	if c.WatchRetries == 0 {
		c.WatchRetries = DefaultWatchRetries
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
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
