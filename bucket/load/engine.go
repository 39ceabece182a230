package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Engine runs one load test, once; Snapshot may be polled from any goroutine meanwhile.
type Engine struct {
	cfg    Config
	store  *bucket.Store
	shards []*shard

	used atomic.Bool

	mu      sync.Mutex // guards the fields below it
	running bool       // the clock runs: start is set
	done    bool
	start   time.Time
	finish  time.Duration
	stop    context.CancelFunc // ends the workers' loop
	fatal   error              // the error that stopped the run (see isFatal)

	claimed   atomic.Int64 // closed loop: requests handed to workers
	firstDone atomic.Int64 // the first answer's time since start; -1 before

	schedMu sync.Mutex // open loop: the arrivals
	sched   *schedule
	due     int64 // arrivals handed out
	over    bool  // the schedule reached the end
}

// New returns an engine for cfg on store, whose client needs MaxRetries -1 and a PoolSize
// above the concurrency.
func New(store *bucket.Store, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	e := &Engine{cfg: cfg, store: store.Direct()}
	e.firstDone.Store(-1)
	for range min(cfg.Concurrency, maxShards) {
		e.shards = append(e.shards, &shard{c: counts{first: -1}, hist: newHistogram(), errs: map[string]int64{}})
	}
	if cfg.Arrival != Closed {
		e.sched = newSchedule(cfg.Arrival, cfg.ArrivalRate, cfg.BurstEvery, cfg.BurstSize, cfg.Seed)
	}
	return e, nil
}

func (e *Engine) newDecider() decider {
	c := e.cfg
	if c.Strategy != Lua {
		return &naiveDecider{rdb: e.store.Redis(), cfg: c}
	}
	d := &luaDecider{store: e.store, keys: slices.Repeat([]string{c.Key}, c.Pipeline), spec: c.Spec, cost: c.Cost}
	if rdb, ok := e.store.Redis().(*redis.Client); ok && rdb.Options().Protocol == 2 && rdb.Options().PoolSize > c.Concurrency {
		d.client = rdb
		d.pin()
	}
	if c.StoredSpec {
		d.spec = bucket.Spec{} // the script takes the bucket's own and rewrites nothing
	}
	return d
}

// Run runs the load test until its bounds or ctx's end (the report is then Interrupted).
// A key that is not, or stops being, a native bucket stops it with a *StoppedError.
func (e *Engine) Run(parent context.Context) (Report, error) {
	if e.used.Swap(true) {
		return Report{}, errors.New("load: an engine runs once")
	}
	if err := e.checkKey(parent); err != nil {
		return e.report(false, 0), err
	}
	// Before the clock starts: load the script and dial each worker's connection.
	if e.cfg.Strategy == Lua {
		_, _, _ = e.store.LoadScript(parent) // without it, decisions fall back to EVAL
	}
	cmdCtx := context.WithoutCancel(parent)
	ctx, stop := context.WithCancel(parent)
	defer stop()
	var ready, wg sync.WaitGroup
	gate := make(chan struct{})
	ready.Add(e.cfg.Concurrency)
	for i := range e.cfg.Concurrency {
		wg.Go(func() {
			d := e.newDecider()
			defer d.close()
			d.dial(ctx, e.cfg.Key)
			ready.Done()
			<-gate
			e.work(ctx, cmdCtx, d, e.shards[i%len(e.shards)])
		})
	}
	ready.Wait()
	e.mu.Lock()
	e.start, e.running, e.stop = time.Now(), true, stop
	e.mu.Unlock()
	close(gate)
	wg.Wait()

	e.mu.Lock()
	e.finish = time.Since(e.start)
	e.running, e.done = false, true
	fatal := e.fatal
	e.mu.Unlock()
	interrupted := parent.Err() != nil
	var unsent int64
	if e.sched != nil && !interrupted && fatal == nil {
		unsent = e.unsent()
	}
	r := e.report(interrupted, unsent)
	if fatal != nil {
		return r, &StoppedError{Err: fatal}
	}
	return r, nil
}

// checkKey refuses a key that is not a native bucket, or is missing when its spec is kept.
func (e *Engine) checkKey(ctx context.Context) error {
	ts, err := Examine(ctx, e.store.Redis(), e.cfg.Key)
	if rediserr.IsUnreachable(err) {
		return nil // nothing can be written either: the decisions fail and are counted
	}
	if err != nil {
		return err
	}
	switch t := ts[0]; {
	case t.Exists() && !t.IsBucket():
		return &StoppedError{Err: NotBucketError(t)}
	case !t.Exists() && e.cfg.StoredSpec:
		return &StoppedError{Err: fmt.Errorf("%w: %q does not exist, so it has no stored spec", bucket.ErrNoSpec, e.cfg.Key)}
	}
	return nil
}

// StoppedError is a run stopped because its key is not (or no longer) a native bucket.
type StoppedError struct{ Err error }

func (e *StoppedError) Error() string { return "the run stopped: " + e.Err.Error() }
func (e *StoppedError) Unwrap() error { return e.Err }

func isFatal(err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, ErrNotBucket) || errors.Is(err, bucket.ErrWrongType) ||
		errors.Is(err, bucket.ErrForeign) || errors.Is(err, bucket.ErrNoSpec)
}

func (e *Engine) since() time.Duration { return time.Since(e.start) }

// lastSendSlack is how long after the end a closed-loop worker may still send.
const lastSendSlack = 100 * time.Millisecond

// work is one worker: claim, decide, record. A closed loop ends the duration after the
// first answer; each worker stops after one request sent at or past it.
func (e *Engine) work(ctx, cmdCtx context.Context, d decider, sh *shard) {
	out := make([]bucket.Result, e.cfg.Pipeline)
	errs := make([]error, e.cfg.Pipeline)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	sleep := func(pause time.Duration) bool { // false when ctx ends first
		timer.Reset(pause)
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		}
	}
	var backoff time.Duration
	for ctx.Err() == nil {
		n, intended, now := 1, time.Duration(-1), time.Duration(0)
		if e.sched != nil {
			at, ok := e.nextArrival()
			if !ok {
				return // what is still due is unsent
			}
			intended = at
			if wait := at - e.since(); wait > 0 && !sleep(wait) { // due before the end: no need to wait for it
				return
			}
			now = e.since()
		} else if now = e.since(); now > e.closedEnd()+lastSendSlack {
			return
		} else if n = e.claim(); n == 0 {
			return
		}
		o := outcome{counts: counts{first: now}, intended: intended}
		o.calls, o.retries = d.decide(cmdCtx, out[:n], errs[:n])
		o.last = e.since()
		o.tokensAt = o.last
		if e.firstDone.Load() < 0 { // a load first: a failed CAS still takes the cache line
			e.firstDone.CompareAndSwap(-1, int64(o.last))
		}
		if intended < 0 {
			o.intended = o.first
		}
		o.errs = errs[:n]
		for i, err := range o.errs {
			switch {
			case err != nil:
				continue
			case out[i].Allowed:
				o.allowed++
			default:
				o.denied++
			}
			o.tokens, o.hasLevel = out[i].Remaining, true
		}
		sh.record(&o)
		if i := slices.IndexFunc(o.errs, isFatal); i >= 0 {
			e.mu.Lock()
			if e.fatal == nil {
				e.fatal = o.errs[i]
				e.stop()
			}
			e.mu.Unlock()
			return
		}
		if e.sched == nil && e.firstDone.Load() >= 0 && o.first >= e.closedEnd() {
			return
		}
		if e.sched != nil || o.allowed+o.denied > 0 {
			backoff = 0
			continue
		}
		backoff = min(max(2*backoff, time.Millisecond), 100*time.Millisecond)
		sleep(backoff)
	}
}

// closedEnd is when a closed loop ends: the duration after the first answer.
func (e *Engine) closedEnd() time.Duration {
	return e.cfg.Duration + time.Duration(max(e.firstDone.Load(), 0))
}

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

func (e *Engine) nextArrival() (time.Duration, bool) {
	e.schedMu.Lock()
	defer e.schedMu.Unlock()
	if e.over || e.since() >= e.cfg.Duration || (e.cfg.Requests > 0 && e.due >= e.cfg.Requests) {
		return 0, false
	}
	at := e.sched.next()
	if at >= e.cfg.Duration { // the schedule is monotone: every later arrival is past the end too
		e.over = true
		return 0, false
	}
	e.due++
	return at, true
}

// maxUnsentWalk bounds the arrivals unsent walks; beyond it, it extrapolates.
const maxUnsentWalk = 10_000_000

// unsent counts the arrivals due before the end that no worker sent, after a run ended by its bounds.
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
	for ; n < limit; n++ {
		at := e.sched.next()
		if n == maxUnsentWalk {
			left := (e.cfg.Duration - at).Seconds() * e.cfg.ArrivalRate
			if e.cfg.BurstEvery > 0 {
				left += (e.cfg.Duration - at).Seconds() / e.cfg.BurstEvery.Seconds() * float64(e.cfg.BurstSize)
			}
			return min(limit, n+int64(max(0, left)))
		}
		if at >= e.cfg.Duration {
			break
		}
	}
	return n
}
