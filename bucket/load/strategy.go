package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// Strategy is how a decision is made.
type Strategy string

const (
	// Lua is bucketctl's script: one atomic EVALSHA per decision (bucket.Store.Take).
	Lua Strategy = "lua"
	// Multi reads with GET, computes in Go and writes back with SET PX: two round trips
	// with nothing holding the key in between, so concurrent callers race and over-grant.
	Multi Strategy = "multi"
	// Watch is optimistic locking: WATCH, GET, then MULTI/SET PX/EXEC, retried
	// when another client changed the key. Correct, but retries pile up under contention.
	Watch Strategy = "watch"
)

// Strategies lists the strategies in the order a comparison runs them.
var Strategies = []Strategy{Lua, Multi, Watch}

// DefaultWatchRetries bounds the retries of one watch decision.
const DefaultWatchRetries = 20

// ErrRetriesExhausted is a watch decision that lost the race every time.
var ErrRetriesExhausted = errors.New("watch: retries exhausted")

// decider makes the decisions of one round trip. out and errs have the same length, the
// number of decisions; errs[i] is nil when out[i] holds a decision. It returns the round
// trips made and the retries.
type decider interface {
	decide(ctx context.Context, out []bucket.Result, errs []error) (calls, retries int)
}

// luaDecider runs the native script: Take for one decision, TakeMany for a batch.
type luaDecider struct {
	store *bucket.Store
	key   string
	keys  []string // key repeated, for TakeMany
	spec  bucket.Spec
	cost  float64
}

func (d *luaDecider) decide(ctx context.Context, out []bucket.Result, errs []error) (int, int) {
	// d.spec is zero when the run keeps the bucket's stored spec: the script uses it.
	if len(out) == 1 {
		out[0], errs[0] = d.store.Take(ctx, d.key, d.spec, d.cost)
		return 1, 0
	}
	err := d.store.TakeMany(ctx, d.keys[:len(out)], d.spec, d.cost, out)
	var be *bucket.BatchError
	switch {
	case err == nil:
		clear(errs)
	case errors.As(err, &be):
		copy(errs, be.Errs)
	default:
		for i := range errs {
			errs[i] = err
		}
	}
	return 1, 0
}

// naive holds what the multi and watch strategies share: the native layout and the refill
// model of bucket.Spec, on the client's clock. Its read checks the key is a native bucket.
type naive struct {
	rdb  bucket.Client
	key  string
	spec bucket.Spec
	// stored: spec is the bucket's own; the decisions use the capacity and rate read and
	// write them only into a bucket they create.
	stored bool
	cost   float64
	now    func() time.Time
	capS   string
	rateS  string
	// grace is how long the key outlives a full bucket, as the script's default.
	grace time.Duration
}

func newNaive(rdb bucket.Client, c Config) naive {
	return naive{rdb: rdb, key: c.Key, spec: c.Spec, stored: c.StoredSpec, cost: c.Cost, now: time.Now,
		capS: strconv.FormatFloat(c.Spec.Capacity, 'g', -1, 64), rateS: strconv.FormatFloat(c.Spec.Rate, 'g', -1, 64),
		grace: time.Minute}
}

// read is what a decision read: the bucket, whether it exists, and its counters.
type read struct {
	stored Stored
	exists bool
}

func (n *naive) queueRead(ctx context.Context, p redis.Pipeliner) *redis.StringCmd {
	return p.Get(ctx, n.key)
}

// checkRead turns the read's reply into a read, or an error wrapping ErrNotBucket for a
// key that is not a native bucket (another type: WRONGTYPE; a string without the tag).
func (n *naive) checkRead(get *redis.StringCmd) (read, error) {
	v, err := get.Result()
	switch {
	case errors.Is(err, redis.Nil):
		if n.stored {
			return read{}, fmt.Errorf("%w: %q vanished during the run, and its spec with it", bucket.ErrNoSpec, n.key)
		}
		return read{}, nil
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
		return read{}, fmt.Errorf("%w: %q holds another type than a string (a native-hash bucket is converted by the script strategy); nothing written", ErrNotBucket, n.key)
	case err != nil:
		return read{}, err
	}
	st, problem := nativeValue(v)
	if problem != "" {
		return read{}, fmt.Errorf("%w: %q %s; nothing written", ErrNotBucket, n.key, problem)
	}
	return read{stored: st, exists: true}, nil
}

// compute applies the model to what was read: the stored spec when the run uses it.
func (n *naive) compute(rd read) (bucket.Level, bucket.Result) {
	spec := n.spec
	if n.stored && rd.exists {
		spec = rd.stored.Spec
	}
	return spec.Take(rd.stored.Level, rd.exists, n.now().UnixMicro(), n.cost)
}

// writes are the write-back command, as the script writes it: one SET PX of the tagged
// value, on deny too so ts never goes stale, with the TTL to full plus the grace.
func (n *naive) writes(ctx context.Context, rd read, l bucket.Level, r bucket.Result) []redis.Cmder {
	ttl := max(int64(math.Ceil(float64(r.ResetAfter)/float64(time.Millisecond)))+n.grace.Milliseconds(), 1)
	spec := n.spec
	if n.stored && rd.exists {
		spec = rd.stored.Spec
	}
	v := bucket.NativeValues{Tokens: l.Tokens, TS: float64(l.TS), Capacity: spec.Capacity, Rate: spec.Rate,
		Allowed: float64(rd.stored.Allowed), Denied: float64(rd.stored.Denied)}
	if r.Allowed {
		v.Allowed++
	} else {
		v.Denied++
	}
	return []redis.Cmder{redis.NewStatusCmd(ctx, "set", n.key, bucket.EncodeNative(v), "px", ttl)}
}

// readFrom reads the bucket through c (the client, or a transaction under WATCH) in one
// round trip.
func (n *naive) readFrom(ctx context.Context, c redis.Cmdable) (read, error) {
	var get *redis.StringCmd
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = n.queueRead(ctx, p)
		return nil
	})
	return n.checkRead(get)
}

// multiDecider: read (GET), compute, write (SET PX), each a round trip of its own.
type multiDecider struct{ naive }

func (d *multiDecider) decide(ctx context.Context, out []bucket.Result, errs []error) (int, int) {
	calls := 0
	for i := range out {
		out[i], errs[i] = d.one(ctx, &calls)
	}
	return calls, 0
}

func (d *multiDecider) one(ctx context.Context, calls *int) (bucket.Result, error) {
	*calls++
	rd, err := d.readFrom(ctx, d.rdb)
	if err != nil {
		return bucket.Result{}, err
	}
	l, r := d.compute(rd)
	for _, c := range d.writes(ctx, rd, l, r) {
		*calls++
		if err := d.rdb.Process(ctx, c); err != nil {
			return r, err
		}
	}
	return r, nil
}

// watchDecider: WATCH, read, compute, MULTI/SET PX/EXEC; retried at most retries times
// when the key changed under the watch.
type watchDecider struct {
	naive
	retries int
}

func (d *watchDecider) decide(ctx context.Context, out []bucket.Result, errs []error) (int, int) {
	calls, retries := 0, 0
	for i := range out {
		out[i], errs[i] = d.one(ctx, &calls, &retries)
	}
	return calls, retries
}

func (d *watchDecider) one(ctx context.Context, calls, retries *int) (bucket.Result, error) {
	var res bucket.Result
	fn := func(tx *redis.Tx) error {
		*calls++ // GET
		rd, err := d.readFrom(ctx, tx)
		if err != nil {
			return err
		}
		l, r := d.compute(rd)
		*calls++ // MULTI ... EXEC, one round trip
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range d.writes(ctx, rd, l, r) {
				_ = p.Process(ctx, c)
			}
			return nil
		})
		if err == nil {
			res = r
		}
		return err
	}
	for attempt := 0; ; attempt++ {
		*calls++ // WATCH
		err := d.rdb.Watch(ctx, fn, d.key)
		if !errors.Is(err, redis.TxFailedErr) {
			return res, err
		}
		if attempt == d.retries {
			return res, fmt.Errorf("%w after %d attempts", ErrRetriesExhausted, attempt+1)
		}
		*retries++
	}
}
