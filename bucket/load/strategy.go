package load

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// Strategy is how a decision is made.
type Strategy string

const (
	Lua   Strategy = "lua"   // bucketctl's script: one atomic EVALSHA per decision
	Multi Strategy = "multi" // GET, compute in Go, SET PX: callers race and over-grant
	Watch Strategy = "watch" // optimistic locking (WATCH, GET, MULTI/SET PX/EXEC), retried
)

// Strategies lists the strategies in the order a comparison runs them.
var Strategies = []Strategy{Lua, Multi, Watch}

// DefaultWatchRetries bounds the retries of one watch decision.
const DefaultWatchRetries = 20

// decider is one worker's: decide makes one round trip's decisions (errs[i] nil when
// out[i] holds one) and returns the round trips and retries; dial connects before the clock.
type decider interface {
	decide(ctx context.Context, out []bucket.Result, errs []error) (calls, retries int64)
	dial(ctx context.Context, key string)
	close()
}

// luaDecider runs Take (TakeMany for a batch), on a connection of its own over RESP2 standalone.
type luaDecider struct {
	store  *bucket.Store
	keys   []string // the key, repeated for TakeMany
	spec   bucket.Spec
	cost   float64
	client *redis.Client // nil: the store's client, connection by connection
	conn   *redis.Conn
}

type pinned struct {
	*redis.Client
	conn *redis.Conn
}

func (p pinned) Process(ctx context.Context, cmd redis.Cmder) error { return p.conn.Process(ctx, cmd) }
func (p pinned) Pipeline() redis.Pipeliner                          { return p.conn.Pipeline() }

// pin takes a fresh connection: after an error, the old one may be broken for good.
func (d *luaDecider) pin() {
	d.close()
	d.conn = d.client.Conn()
	d.store = d.store.Through(pinned{d.client, d.conn})
}

func (d *luaDecider) dial(ctx context.Context, key string) {
	if d.conn != nil {
		_ = d.conn.Exists(ctx, key).Err()
		return
	}
	_ = d.store.Redis().Exists(ctx, key).Err()
}

func (d *luaDecider) close() {
	if d.conn != nil {
		_ = d.conn.Close()
	}
}

func (d *luaDecider) decide(ctx context.Context, out []bucket.Result, errs []error) (int64, int64) {
	var err error
	if len(out) == 1 {
		out[0], errs[0] = d.store.Take(ctx, d.keys[0], d.spec, d.cost)
		err = errs[0]
	} else if err = d.store.TakeMany(ctx, d.keys[:len(out)], d.spec, d.cost, out); err == nil {
		clear(errs)
	} else if be, ok := errors.AsType[*bucket.BatchError](err); ok {
		copy(errs, be.Errs)
	} else {
		for i := range errs {
			errs[i] = err
		}
	}
	if err != nil && d.conn != nil {
		d.pin()
	}
	return 1, 0
}

// naiveDecider is the multi and watch strategies: bucket.Spec's model on the client's clock.
type naiveDecider struct {
	rdb bucket.Client
	cfg Config
}

func (d *naiveDecider) dial(ctx context.Context, key string) { _ = d.rdb.Exists(ctx, key).Err() }
func (d *naiveDecider) close()                               {}

func (d *naiveDecider) decide(ctx context.Context, out []bucket.Result, errs []error) (calls, retries int64) {
	for i := range out {
		if d.cfg.Strategy == Watch {
			out[i], errs[i] = d.watched(ctx, &calls, &retries)
		} else {
			out[i], errs[i] = d.once(ctx, d.rdb, &calls, func(set redis.Cmder) error { return d.rdb.Process(ctx, set) })
		}
	}
	return calls, retries
}

// once reads the bucket through c, computes, and writes it with write (on deny too).
func (d *naiveDecider) once(ctx context.Context, c redis.Cmdable, calls *int64, write func(redis.Cmder) error) (bucket.Result, error) {
	*calls++
	v, err := c.Get(ctx, d.cfg.Key).Result()
	var st Stored
	exists := err == nil
	switch {
	case errors.Is(err, redis.Nil):
		if d.cfg.StoredSpec {
			return bucket.Result{}, fmt.Errorf("%w: %q vanished during the run, and its spec with it", bucket.ErrNoSpec, d.cfg.Key)
		}
	case redis.HasErrorPrefix(err, "WRONGTYPE"):
		return bucket.Result{}, fmt.Errorf("%w: %q holds another type than a string (a native-hash bucket is converted by the script strategy); nothing written", ErrNotBucket, d.cfg.Key)
	case err != nil:
		return bucket.Result{}, err
	default:
		var problem string
		if st, problem = nativeValue(v); problem != "" {
			return bucket.Result{}, fmt.Errorf("%w: %q %s; nothing written", ErrNotBucket, d.cfg.Key, problem)
		}
	}
	spec := d.cfg.Spec
	if d.cfg.StoredSpec && exists {
		spec = st.Spec
	}
	l, r := spec.Take(st.Level, exists, time.Now().UnixMicro(), d.cfg.Cost)
	ttl := bucket.NativeLayout.Model().ResetTTL(spec, r.ResetAfter).Milliseconds() // as the script writes it
	nv := bucket.NativeValues{Tokens: l.Tokens, TS: float64(l.TS), Capacity: spec.Capacity, Rate: spec.Rate,
		Allowed: float64(st.Allowed), Denied: float64(st.Denied)}
	if r.Allowed {
		nv.Allowed++
	} else {
		nv.Denied++
	}
	*calls++ // SET, or MULTI ... EXEC: one round trip
	return r, write(redis.NewStatusCmd(ctx, "set", d.cfg.Key, bucket.EncodeNative(nv), "px", ttl))
}

func (d *naiveDecider) watched(ctx context.Context, calls, retries *int64) (bucket.Result, error) {
	var res bucket.Result
	fn := func(tx *redis.Tx) error {
		r, err := d.once(ctx, tx, calls, func(set redis.Cmder) error {
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error { _ = p.Process(ctx, set); return nil })
			return err
		})
		if err == nil {
			res = r
		}
		return err
	}
	for attempt := 0; ; attempt++ {
		*calls++ // WATCH
		err := d.rdb.Watch(ctx, fn, d.cfg.Key)
		if !errors.Is(err, redis.TxFailedErr) {
			return res, err
		}
		if attempt == d.cfg.WatchRetries {
			return res, fmt.Errorf("watch: retries exhausted after %d attempts", attempt+1)
		}
		*retries++
	}
}
