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
	// Multi reads with HMGET, computes in Go and writes back with HSET and PEXPIRE: three
	// round trips with nothing holding the key in between, so concurrent callers race and
	// over-grant.
	Multi Strategy = "multi"
	// Watch is optimistic locking: WATCH, HMGET, then MULTI/HSET/PEXPIRE/EXEC, retried
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

// naive holds what the multi and watch strategies share: the native hash layout (tokens,
// ts in microseconds, capacity, rate) and the refill model of bucket.Spec, on the
// client's clock.
type naive struct {
	rdb   bucket.Client
	key   string
	spec  bucket.Spec
	cost  float64
	now   func() time.Time
	capS  string
	rateS string
	// grace is how long the key outlives a full bucket, as the script's default.
	grace time.Duration
}

func newNaive(rdb bucket.Client, key string, spec bucket.Spec, cost float64) naive {
	return naive{rdb: rdb, key: key, spec: spec, cost: cost, now: time.Now,
		capS: strconv.FormatFloat(spec.Capacity, 'g', -1, 64), rateS: strconv.FormatFloat(spec.Rate, 'g', -1, 64),
		grace: time.Minute}
}

// compute applies the model to what HMGET read.
func (n *naive) compute(vals []interface{}) (bucket.Level, bucket.Result, error) {
	var l bucket.Level
	exists := false
	if len(vals) == 2 && vals[0] != nil && vals[1] != nil {
		ts, _ := vals[0].(string)
		tk, _ := vals[1].(string)
		var err1, err2 error
		l.TS, err1 = strconv.ParseInt(ts, 10, 64)
		l.Tokens, err2 = strconv.ParseFloat(tk, 64)
		if err1 != nil || err2 != nil {
			return l, bucket.Result{}, fmt.Errorf("%w: %q has ts %q, tokens %q", bucket.ErrWrongType, n.key, ts, tk)
		}
		exists = true
	}
	l, r := n.spec.Take(l, exists, n.now().UnixMicro(), n.cost)
	return l, r, nil
}

// writes are the write-back commands, HSET and PEXPIRE: always, on deny too, so ts never
// goes stale. The TTL is the script's: the time to refill to full, plus a grace.
func (n *naive) writes(ctx context.Context, l bucket.Level, r bucket.Result) [2]redis.Cmder {
	ttl := int64(math.Ceil(float64(r.ResetAfter)/float64(time.Millisecond))) + n.grace.Milliseconds()
	return [2]redis.Cmder{
		redis.NewIntCmd(ctx, "hset", n.key, "ts", strconv.FormatInt(l.TS, 10), "tokens", bucket.FormatTokens(l.Tokens),
			"capacity", n.capS, "rate", n.rateS),
		redis.NewBoolCmd(ctx, "pexpire", n.key, ttl),
	}
}

func (n *naive) read(ctx context.Context, c redis.Cmdable) ([]interface{}, error) {
	return c.HMGet(ctx, n.key, "ts", "tokens").Result()
}

// multiDecider: HMGET, compute, HSET, PEXPIRE, each its own round trip.
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
	vals, err := d.read(ctx, d.rdb)
	if err != nil {
		return bucket.Result{}, err
	}
	l, r, err := d.compute(vals)
	if err != nil {
		return r, err
	}
	// Two separate commands, as a naive client sends them.
	for _, c := range d.writes(ctx, l, r) {
		*calls++
		if err := d.rdb.Process(ctx, c); err != nil {
			return r, err
		}
	}
	return r, nil
}

// watchDecider: WATCH, HMGET, compute, MULTI/HSET/PEXPIRE/EXEC; retried when the key
// changed under the watch, at most retries times.
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
		*calls++ // HMGET
		vals, err := d.read(ctx, tx)
		if err != nil {
			return err
		}
		l, r, err := d.compute(vals)
		if err != nil {
			return err
		}
		*calls++ // MULTI ... EXEC, one round trip
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range d.writes(ctx, l, r) {
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
