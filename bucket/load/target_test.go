package load_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// appKeys writes keys that look like buckets and are not native ones, and returns their
// DUMPs.
func appKeys(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.HSet(ctx, "app:user:2", "tokens", "5", "ts", "1700000000000", "email", "a@x", "password_hash", "h").Err())
	must(c.HSet(ctx, "app:full", "tokens", "5", "ts", "1", "capacity", "10", "rate", "1", "email", "a@x").Err())
	must(c.HSet(ctx, "app:bench", "tokens", "5", "ts", "1700000000000").Err())
	must(c.HSet(ctx, "app:nan", "tokens", "5", "ts", "1", "capacity", "abc", "rate", "1").Err())
	must(c.HSet(ctx, "app:inf", "tokens", "5", "ts", "1", "capacity", "1e400", "rate", "1").Err())
	must(c.HSet(ctx, "app:neg", "tokens", "-1", "ts", "1", "capacity", "10", "rate", "1").Err())
	must(c.Set(ctx, "app:str", "5", 0).Err())
	must(c.RPush(ctx, "app:list", "tokens", "5").Err())
	must(c.SAdd(ctx, "app:set", "tokens").Err())
	must(c.ZAdd(ctx, "app:zset", redis.Z{Score: 1, Member: "tokens"}).Err())
	dumps := map[string]string{}
	for _, k := range c.Keys(ctx, "app:*").Val() {
		dumps[k] = c.Dump(ctx, k).Val()
	}
	return dumps
}

// Examine tells native buckets from everything else, whatever it holds, and PlanFor
// refuses the rest.
func TestExamineAndPlan(t *testing.T) {
	t.Parallel()
	st, c := newStore(t, 2)
	ctx := context.Background()
	apps := appKeys(t, c)
	if _, err := st.Take(ctx, "rl:native", bucket.Spec{Capacity: 5, Rate: 1}, 2); err != nil {
		t.Fatal(err)
	}
	keys := append(slices.Sorted(maps.Keys(apps)), "rl:native", "rl:missing")
	targets, err := load.Examine(ctx, st.Redis(), keys...)
	if err != nil {
		t.Fatal(err)
	}
	spec := bucket.Spec{Capacity: 10, Rate: 10}
	for _, tg := range targets {
		p, err := load.PlanFor(tg, spec, false, false)
		switch tg.Key {
		case "rl:native":
			if !tg.IsBucket() || err != nil || p.Spec != (bucket.Spec{Capacity: 5, Rate: 1}) || !p.StoredSpec ||
				!slices.Equal(p.Changes, []string{"tokens", "ts", "allowed", "denied", "TTL"}) {
				t.Errorf("native bucket: %+v, plan %+v, %v", tg, p, err)
			}
			// A capacity that differs from the stored one is refused, naming the stored spec:
			// a run never rewrites the application's spec.
			var sd *bucket.SpecDiffersError
			if _, err := load.PlanFor(tg, spec, true, false); !errors.As(err, &sd) || sd.Stored != (bucket.Spec{Capacity: 5, Rate: 1}) {
				t.Errorf("with --capacity 10 on a bucket storing 5: %v", err)
			}
			if p, err := load.PlanFor(tg, bucket.Spec{Capacity: 5, Rate: 1}, true, true); err != nil || !p.StoredSpec {
				t.Errorf("with the stored spec given: %+v, %v", p, err)
			}
		case "rl:missing":
			if tg.Exists() || err != nil || p.Spec != spec || p.StoredSpec || len(p.Changes) != 7 {
				t.Errorf("missing key: %+v, plan %+v, %v", tg, p, err)
			}
		default:
			if tg.IsBucket() || tg.Problem == "" || !errors.Is(err, load.ErrNotBucket) {
				t.Errorf("%s taken for a bucket: %+v (%v)", tg.Key, tg, err)
			}
		}
	}
	for k, d := range apps {
		if c.Dump(ctx, k).Val() != d {
			t.Errorf("examining changed %s", k)
		}
	}
}

// Every strategy, run straight on a key that is not a native bucket, refuses it at the
// first decision, stops and writes nothing.
func TestEveryStrategyRefusesWhatIsNotABucket(t *testing.T) {
	t.Parallel()
	st, c := newStore(t, 2)
	ctx := context.Background()
	apps := appKeys(t, c)
	for _, s := range load.Strategies {
		for _, k := range []string{"app:user:2", "app:full", "app:bench", "app:str", "app:list"} {
			e, err := load.New(st, load.Config{Key: k, Spec: bucket.Spec{Capacity: 10, Rate: 10}, Cost: 1, Strategy: s,
				Concurrency: 2, Requests: 1000, Duration: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			r, err := e.Run(ctx)
			var stopped *load.StoppedError
			if !errors.As(err, &stopped) || r.Allowed+r.Denied != 0 || r.Requests > 2 {
				t.Errorf("%s on %s: %v, report %d requests, %d allowed, %d denied", s, k, err, r.Requests, r.Allowed, r.Denied)
			}
		}
	}
	for k, d := range apps {
		if c.Dump(ctx, k).Val() != d {
			t.Errorf("%s was written", k)
		}
	}
}

// The watch strategy checks the shape under its WATCH: a bucket replaced by application
// data during the run stops the run, and the application's hash is left exactly as
// written. Its counters match the report: each decision written once.
func TestWatchStopsWhenTheBucketBecomesApplicationData(t *testing.T) {
	t.Parallel()
	st, c := newStore(t, 4)
	ctx := context.Background()
	e, err := load.New(st, load.Config{Key: "k", Spec: bucket.Spec{Capacity: 1e6, Rate: 1e6}, Cost: 1, Strategy: load.Watch,
		Concurrency: 4, Duration: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var rep load.Report
	go func() {
		var err error
		rep, err = e.Run(ctx)
		done <- err
	}()
	redistest.WaitFor(t, 10*time.Second, "200 decisions", func() bool { return e.Snapshot().Decisions >= 200 })
	app := map[string]string{"tokens": "5", "ts": "1", "email": "a@x"}
	if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, "k")
		p.HSet(ctx, "k", app)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, load.ErrNotBucket) || rep.Interrupted {
		t.Fatalf("the run ended with %v (interrupted %v), want it stopped: not a native bucket", err, rep.Interrupted)
	}
	if got := c.HGetAll(ctx, "k").Val(); !maps.Equal(got, app) {
		t.Fatalf("the application's hash is now %v", got)
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl != -1 {
		t.Fatalf("the application's hash got a TTL: %v", ttl)
	}
}

// The naive strategies write a whole native bucket into a key they create, and in an
// existing bucket whose stored spec the run keeps, they leave capacity and rate as stored.
func TestNaiveStrategiesWriteNativeBucketsOnly(t *testing.T) {
	t.Parallel()
	st, c := newStore(t, 2)
	ctx := context.Background()
	for _, s := range []load.Strategy{load.Multi, load.Watch} {
		key := "fresh:" + string(s)
		r := run(t, st, load.Config{Key: key, Spec: bucket.Spec{Capacity: 10, Rate: 0.001}, Cost: 1, Strategy: s,
			Concurrency: 1, Requests: 30})
		n, problem := bucket.DecodeNative(c.Get(ctx, key).Val())
		if problem != "" || n.Capacity != 10 || n.Rate != 0.001 {
			t.Errorf("%s created %+v (%s)", s, n, problem)
		}
		if n.Allowed != 10 || n.Denied != 20 || r.Allowed != 10 || c.PTTL(ctx, key).Val() <= 0 {
			t.Errorf("%s: counters %+v, report allowed %d, TTL %v", s, n, r.Allowed, c.PTTL(ctx, key).Val())
		}

		// A bucket of capacity 5.5, rate 0.25.
		key = "kept:" + string(s)
		c.Set(ctx, key, bucket.EncodeNative(bucket.NativeValues{Tokens: 5.5, TS: float64(time.Now().UnixMicro()), Capacity: 5.5, Rate: 0.25}), 0)
		r = run(t, st, load.Config{Key: key, Spec: bucket.Spec{Capacity: 5.5, Rate: 0.25}, StoredSpec: true, Cost: 1,
			Strategy: s, Concurrency: 1, Requests: 8})
		n, _ = bucket.DecodeNative(c.Get(ctx, key).Val())
		if n.Capacity != 5.5 || n.Rate != 0.25 || r.Allowed != 5 || r.Errors != 0 {
			t.Errorf("%s rewrote the stored spec or ignored it: %+v, allowed %d, errors %v", s, n, r.Allowed, r.ErrorSamples)
		}
	}
}
