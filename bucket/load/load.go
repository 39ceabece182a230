// Package load is bucketctl's load generator: workers that hammer one bucket with
// decisions, in a closed loop or with open-loop arrivals (constant or Poisson, with
// bursts), through bucketctl's atomic script or through the naive strategies a Go
// benchmark compares it with, and the statistics of the run: counts per second, latency
// (HdrHistogram) and the over-grant against the theoretical maximum.
//
// A run is always bounded in time (MaxDuration at most) and usually in requests. The
// package never prints: a caller polls Snapshot while Run works and renders the Report.
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

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
	// Cost is the tokens each request takes (> 0).
	Cost     float64
	Strategy Strategy
	// Concurrency is the number of workers, each with its own connection at a time.
	Concurrency int
	// Pipeline is the decisions each round trip carries (lua strategy, closed loop).
	Pipeline int
	// Duration bounds the run in time; Requests in requests (0: no such bound). With
	// neither, the run lasts DefaultDuration; with Requests alone, at most MaxDuration.
	// A closed loop's duration runs from the first answer, and each worker sends one last
	// request at its end, so the decisions span all of it; an open loop sends the arrivals
	// due before Duration after the start.
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

// withDefaults fills the zero values.
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
	switch c.Strategy {
	case Lua, Multi, Watch:
	default:
		return invalid("strategy %q: must be lua, multi or watch", c.Strategy)
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
	default:
		return invalid("arrival %q: must be closed, constant or poisson", c.Arrival)
	}
	return nil
}

// Engine runs one load test. Use it once: Run, with Snapshot polled meanwhile from any
// goroutine.
type Engine struct {
	cfg    Config
	store  *bucket.Store
	shards []*shard

	mu      sync.Mutex // guards the run's state and times
	used    bool       // Run was called
	running bool       // the clock runs: start is set
	done    bool
	start   time.Time
	finish  time.Duration

	claimed   atomic.Int64 // closed loop: requests handed to workers
	firstDone atomic.Int64 // the first answer's time since start; -1 before

	schedMu sync.Mutex // open loop: the arrivals
	sched   *schedule
	due     int64 // arrivals handed out
	over    bool  // the schedule reached the end
}

// New returns an engine for cfg on store. The store's client should have a PoolSize of at
// least the concurrency and MaxRetries -1 (never re-send a decision). The engine never
// coalesces its workers' decisions (see bucket.Store.Direct).
func New(store *bucket.Store, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// Every worker stands for an independent client with its own round trips: the Store
	// must not coalesce their decisions (--pipeline batches explicitly).
	e := &Engine{cfg: cfg, store: store.Direct()}
	e.firstDone.Store(-1)
	for range min(cfg.Concurrency, maxShards) {
		e.shards = append(e.shards, newShard())
	}
	if cfg.Arrival != Closed {
		e.sched = newSchedule(cfg.Arrival, cfg.ArrivalRate, cfg.BurstEvery, cfg.BurstSize, cfg.Seed)
	}
	return e, nil
}

func (e *Engine) newDecider() decider {
	c := e.cfg
	switch c.Strategy {
	case Multi:
		return &multiDecider{newNaive(e.store.Redis(), c.Key, c.Spec, c.Cost)}
	case Watch:
		return &watchDecider{naive: newNaive(e.store.Redis(), c.Key, c.Spec, c.Cost), retries: c.WatchRetries}
	}
	d := &luaDecider{store: e.store, key: c.Key, spec: c.Spec, cost: c.Cost}
	if c.Pipeline > 1 {
		d.keys = make([]string, c.Pipeline)
		for i := range d.keys {
			d.keys[i] = c.Key
		}
	}
	return d
}

// Run runs the load test until its duration or request count is reached, or ctx is
// cancelled (an interrupt): then it stops sending, lets the requests under way finish
// and returns the report so far, marked Interrupted. Decisions under way are never cut
// short by ctx, since a cut decision may have been applied all the same.
func (e *Engine) Run(ctx context.Context) (Report, error) {
	e.mu.Lock()
	if e.used {
		e.mu.Unlock()
		return Report{}, errors.New("load: an engine runs once")
	}
	e.used = true
	e.mu.Unlock()

	// Before the clock starts: the script is loaded (so no decision pays for a NOSCRIPT)
	// and each worker takes a connection to the key's server (an EXISTS, not counted), so
	// dialing is not measured either.
	if e.cfg.Strategy == Lua {
		_, _, _ = e.store.LoadScript(ctx) // without it, decisions fall back to EVAL
	}
	cmdCtx := context.WithoutCancel(ctx)
	var ready, wg sync.WaitGroup
	gate := make(chan struct{})
	ready.Add(e.cfg.Concurrency)
	for i := range e.cfg.Concurrency {
		wg.Go(func() {
			_ = e.store.Redis().Exists(ctx, e.cfg.Key).Err()
			ready.Done()
			<-gate
			e.work(ctx, cmdCtx, e.shards[i%len(e.shards)])
		})
	}
	ready.Wait()
	e.mu.Lock()
	e.start, e.running = time.Now(), true
	e.mu.Unlock()
	close(gate)
	wg.Wait()

	e.mu.Lock()
	e.finish = time.Since(e.start)
	e.running, e.done = false, true
	e.mu.Unlock()
	interrupted := ctx.Err() != nil
	var unsent int64
	if e.sched != nil && !interrupted {
		unsent = e.unsent()
	}
	return e.report(interrupted, unsent), nil
}

func (e *Engine) since() time.Duration { return time.Since(e.start) }

// answered notes the time of the first answer: a closed loop's duration runs from it.
func (e *Engine) answered(at time.Duration) {
	// A load first: a failed CAS still takes the cache line, and every worker calls this.
	if e.firstDone.Load() < 0 {
		e.firstDone.CompareAndSwap(-1, int64(at))
	}
}

// closedOver reports whether a closed-loop request sent at sent is at or past the end, the
// duration after the first answer. Each worker stops after one such request, so the
// decisions span at least the whole duration on the server's clock too: the first answer
// comes after the first decision, and the last requests are sent after the end.
func (e *Engine) closedOver(sent time.Duration) bool {
	first := e.firstDone.Load()
	return first >= 0 && sent >= time.Duration(first)+e.cfg.Duration
}

// work is one worker: claim requests, decide, record, until the run is over.
func (e *Engine) work(ctx, cmdCtx context.Context, sh *shard) {
	d := e.newDecider()
	out := make([]bucket.Result, e.cfg.Pipeline)
	errs := make([]error, e.cfg.Pipeline)
	var backoff time.Duration
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for ctx.Err() == nil {
		n, intended := 1, time.Duration(-1)
		if e.sched != nil {
			if e.since() >= e.cfg.Duration {
				return // what is still due is unsent
			}
			at, ok := e.nextArrival()
			if !ok {
				return
			}
			intended = at
			// Wait for the due time; not for the deadline, since the arrival is due before it.
			if wait := at - e.since(); wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			}
		} else if n = e.claim(); n == 0 {
			return
		}
		o := outcome{sent: e.since()}
		o.calls, o.retries = d.decide(cmdCtx, out[:n], errs[:n])
		o.done = e.since()
		e.answered(o.done)
		o.intended = o.sent
		if intended >= 0 {
			o.intended = intended
		}
		for i := range n {
			if errs[i] != nil {
				continue
			}
			if out[i].Allowed {
				o.allowed++
			} else {
				o.denied++
			}
			o.tokens, o.hasLevel = out[i].Remaining, true
		}
		o.errs = errs[:n]
		sh.record(&o)
		if e.sched == nil && e.closedOver(o.sent) {
			return
		}
		// A closed loop facing a failing server (a master down, a failover under way) backs
		// off instead of spinning: 1 ms doubling to 100 ms while every decision fails.
		if e.sched == nil && o.allowed+o.denied == 0 {
			backoff = min(max(2*backoff, time.Millisecond), 100*time.Millisecond)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		} else {
			backoff = 0
		}
	}
}

// claim hands a closed-loop worker up to Pipeline requests, within the request count.
func (e *Engine) claim() int {
	n := e.cfg.Pipeline
	if e.cfg.Requests == 0 {
		return n
	}
	for {
		cur := e.claimed.Load()
		k := min(int64(n), e.cfg.Requests-cur)
		if k <= 0 {
			return 0
		}
		if e.claimed.CompareAndSwap(cur, cur+k) {
			return int(k)
		}
	}
}

// nextArrival hands an open-loop worker the next arrival due before the end.
func (e *Engine) nextArrival() (time.Duration, bool) {
	e.schedMu.Lock()
	defer e.schedMu.Unlock()
	if e.over || (e.cfg.Requests > 0 && e.due >= e.cfg.Requests) {
		return 0, false
	}
	at := e.sched.next()
	if at >= e.cfg.Duration {
		// The schedule is monotone: every later arrival is due after the end too.
		e.over = true
		return 0, false
	}
	e.due++
	return at, true
}

// maxUnsentWalk bounds the arrivals unsent walks one by one; beyond it, it extrapolates
// at the mean rate.
const maxUnsentWalk = 10_000_000

// unsent counts the arrivals due before the end that no worker sent: the client could not
// keep up (more concurrency helps). Only after a run that ended by its bounds.
func (e *Engine) unsent() int64 {
	e.schedMu.Lock()
	defer e.schedMu.Unlock()
	if e.over {
		return 0
	}
	limit := int64(math.MaxInt64)
	if e.cfg.Requests > 0 {
		limit = e.cfg.Requests - e.due
	}
	var n int64
	for n < limit {
		if n == maxUnsentWalk {
			at := e.sched.next()
			left := (e.cfg.Duration - at).Seconds() * e.cfg.ArrivalRate
			if e.cfg.BurstEvery > 0 {
				left += (e.cfg.Duration - at).Seconds() / e.cfg.BurstEvery.Seconds() * float64(e.cfg.BurstSize)
			}
			return min(limit, n+int64(max(0, left)))
		}
		if e.sched.next() >= e.cfg.Duration {
			break
		}
		n++
	}
	return n
}

// Snapshot is the state of a run so far, for a live view.
type Snapshot struct {
	Key      string
	Strategy Strategy
	Spec     bucket.Spec
	// Elapsed is the time since the start; Duration and Requests the run's bounds
	// (Requests 0: none).
	Elapsed  time.Duration
	Duration time.Duration
	Requests int64
	// Decisions made so far (allowed + denied + errors) and their parts.
	Decisions, Allowed, Denied, Errors int64
	Retries, Calls                     int64
	// Tokens is the bucket's level after the latest decision (HasTokens: one was made).
	Tokens    float64
	HasTokens bool
	Latency   Latency
	// PerSecond holds the decisions completed in each second since the start.
	PerSecond []Second
	// Running is false before the start and after the end.
	Running bool
}

// Progress is how far the run is towards its nearest bound, in [0,1].
func (s Snapshot) Progress() float64 {
	p := 0.0
	if s.Duration > 0 {
		p = float64(s.Elapsed) / float64(s.Duration)
	}
	if s.Requests > 0 {
		p = max(p, float64(s.Decisions)/float64(s.Requests))
	}
	return math.Min(1, math.Max(0, p))
}

// merged sums the shards.
func (e *Engine) merged() (counts, *histogramSet, []Second) {
	tot := counts{first: -1}
	hs := newHistogramSet()
	var secs []Second
	for _, sh := range e.shards {
		sh.mu.Lock()
		tot.add(&sh.c)
		hs.merge(sh)
		for len(secs) < len(sh.seconds) {
			secs = append(secs, Second{})
		}
		for i, s := range sh.seconds {
			secs[i].Allowed += s.Allowed
			secs[i].Denied += s.Denied
			secs[i].Errors += s.Errors
		}
		sh.mu.Unlock()
	}
	return tot, hs, secs
}

// Snapshot returns the run so far. It is safe to call at any time, from any goroutine.
func (e *Engine) Snapshot() Snapshot {
	c, hs, secs := e.merged()
	s := Snapshot{Key: e.cfg.Key, Strategy: e.cfg.Strategy, Spec: e.cfg.Spec,
		Duration: e.cfg.Duration, Requests: e.cfg.Requests,
		Decisions: c.allowed + c.denied + c.errors, Allowed: c.allowed, Denied: c.denied, Errors: c.errors,
		Retries: c.retries, Calls: c.calls, Tokens: c.tokens, HasTokens: c.hasLevel,
		Latency: latencyOf(hs.h), PerSecond: secs}
	e.mu.Lock()
	switch {
	case e.running:
		s.Elapsed, s.Running = time.Since(e.start), true
	case e.done:
		s.Elapsed = e.finish
	}
	e.mu.Unlock()
	return s
}

// Report is the outcome of a run. Its JSON and YAML field names are stable.
type Report struct {
	// Server names the Redis the run went to; the engine leaves it to the caller.
	Server      string   `json:"server" yaml:"server"`
	Key         string   `json:"key" yaml:"key"`
	Strategy    Strategy `json:"strategy" yaml:"strategy"`
	Arrival     Arrival  `json:"arrival" yaml:"arrival"`
	ArrivalRate float64  `json:"arrival_rate" yaml:"arrival_rate"`
	BurstEveryS float64  `json:"burst_every_s" yaml:"burst_every_s"`
	BurstSize   int      `json:"burst_size" yaml:"burst_size"`
	Concurrency int      `json:"concurrency" yaml:"concurrency"`
	Pipeline    int      `json:"pipeline" yaml:"pipeline"`
	Capacity    float64  `json:"capacity" yaml:"capacity"`
	Rate        float64  `json:"rate" yaml:"rate"`
	Cost        float64  `json:"cost" yaml:"cost"`
	// DurationS is the measured duration T: from the first request sent to the last answer.
	DurationS float64 `json:"duration_s" yaml:"duration_s"`
	// Requests is the decisions sent: Allowed + Denied + Errors.
	Requests int64 `json:"requests" yaml:"requests"`
	Allowed  int64 `json:"allowed" yaml:"allowed"`
	Denied   int64 `json:"denied" yaml:"denied"`
	Errors   int64 `json:"errors" yaml:"errors"`
	// Retries are the watch strategy's retries (a watched key changed before EXEC).
	Retries int64 `json:"retries" yaml:"retries"`
	// Unsent are open-loop arrivals due before the end that no worker was free to send.
	Unsent int64 `json:"unsent" yaml:"unsent"`
	// RedisCalls are round trips to Redis; a pipeline of N decisions is one.
	RedisCalls           int64   `json:"redis_calls" yaml:"redis_calls"`
	RedisCallsPerRequest float64 `json:"redis_calls_per_request" yaml:"redis_calls_per_request"`
	// OpsPerSec is the decisions answered (allowed + denied) per second of DurationS.
	OpsPerSec float64 `json:"ops_per_sec" yaml:"ops_per_sec"`
	// TheoreticalMax is the most a correct limiter allows in DurationS from a full bucket:
	// floor((capacity + rate × duration_s) / cost).
	TheoreticalMax int64 `json:"theoretical_max" yaml:"theoretical_max"`
	// OverGrantPct is (allowed - theoretical_max) / theoretical_max × 100: above 0 the
	// limiter let through more than it may; below 0 it granted less than it could.
	OverGrantPct float64       `json:"over_grant_pct" yaml:"over_grant_pct"`
	LatencyMS    Latency       `json:"latency_ms" yaml:"latency_ms"`
	Histogram    []Band        `json:"latency_histogram" yaml:"latency_histogram"`
	PerSecond    []Second      `json:"per_second" yaml:"per_second"`
	ErrorSamples []ErrorSample `json:"error_samples" yaml:"error_samples"`
	// Interrupted marks a run stopped before its bounds (Ctrl-C): the report so far.
	Interrupted bool `json:"interrupted" yaml:"interrupted"`
}

// ErrorSample is one distinct error message and how often it came.
type ErrorSample struct {
	Message string `json:"message" yaml:"message"`
	Count   int64  `json:"count" yaml:"count"`
}

// Duration is DurationS as a time.Duration.
func (r Report) Duration() time.Duration { return time.Duration(r.DurationS * float64(time.Second)) }

// TheoreticalMax is the most decisions of cost a bucket of spec allows over d, starting
// full: floor((capacity + rate × d) / cost).
func TheoreticalMax(spec bucket.Spec, cost float64, d time.Duration) int64 {
	tokens := spec.Capacity + spec.Rate*d.Seconds()
	// A hair of tolerance so 40 tokens of cost 1 read as 40, not 39.999….
	return int64(math.Floor(tokens/cost + 1e-9))
}

func (e *Engine) report(interrupted bool, unsent int64) Report {
	c, hs, secs := e.merged()
	cfg := e.cfg
	r := Report{Key: cfg.Key, Strategy: cfg.Strategy, Arrival: cfg.Arrival, ArrivalRate: cfg.ArrivalRate,
		BurstEveryS: cfg.BurstEvery.Seconds(), BurstSize: cfg.BurstSize,
		Concurrency: cfg.Concurrency, Pipeline: cfg.Pipeline,
		Capacity: cfg.Spec.Capacity, Rate: cfg.Spec.Rate, Cost: cfg.Cost,
		Allowed: c.allowed, Denied: c.denied, Errors: c.errors, Retries: c.retries, Unsent: unsent,
		RedisCalls: c.calls, LatencyMS: latencyOf(hs.h), Histogram: bands(hs.h), PerSecond: secs,
		Interrupted: interrupted, ErrorSamples: hs.errorSamples()}
	if r.PerSecond == nil {
		r.PerSecond = []Second{}
	}
	if r.Histogram == nil {
		r.Histogram = []Band{}
	}
	r.Requests = r.Allowed + r.Denied + r.Errors
	var span time.Duration
	if c.first >= 0 {
		span = c.last - c.first
	}
	r.DurationS = span.Seconds()
	if r.Requests > 0 {
		r.RedisCallsPerRequest = float64(r.RedisCalls) / float64(r.Requests)
	}
	if span > 0 {
		r.OpsPerSec = float64(r.Allowed+r.Denied) / span.Seconds()
	}
	r.TheoreticalMax = TheoreticalMax(cfg.Spec, cfg.Cost, span)
	if r.TheoreticalMax > 0 {
		r.OverGrantPct = float64(r.Allowed-r.TheoreticalMax) / float64(r.TheoreticalMax) * 100
	}
	return r
}

// histogramSet merges the shards' histograms and error messages.
type histogramSet struct {
	h    *hdr.Histogram
	errs map[string]int64
}

func newHistogramSet() *histogramSet {
	return &histogramSet{h: hdr.New(histMin, histMax, histDigits), errs: map[string]int64{}}
}

func (s *histogramSet) merge(sh *shard) {
	s.h.Merge(sh.hist)
	for m, n := range sh.errs {
		s.errs[m] += n
	}
}

func (s *histogramSet) errorSamples() []ErrorSample {
	out := make([]ErrorSample, 0, len(s.errs))
	for m, n := range s.errs {
		out = append(out, ErrorSample{Message: m, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Message < out[j].Message
	})
	return out
}

// Exists reports which of keys exist, in one round trip per key's node.
func Exists(ctx context.Context, rdb bucket.Client, keys ...string) ([]string, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Exists(ctx, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var found []string
	for i, c := range cmds {
		if c.Val() > 0 {
			found = append(found, keys[i])
		}
	}
	return found, nil
}
