package demo

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Key is one bucket the demo drives: Poisson arrivals at a mean of RPS per second, plus a
// burst of Burst requests every BurstEvery (the first after FirstBurst).
type Key struct {
	Key   string
	Spec  bucket.Spec
	App   *App    // nil: bucketctl's own script
	Start float64 // the level it is seeded with (0: none; its first request creates it full)

	RPS        float64
	Burst      int
	BurstEvery time.Duration
	FirstBurst time.Duration

	Allowed, Denied, Errors atomic.Int64
}

// Layout is the layout the bucket is written in.
func (k *Key) Layout() bucket.Layout {
	if k.App == nil {
		return bucket.NativeLayout
	}
	return bucket.Presets[k.App.Layout]
}

// Keys are the demo's buckets under prefix: bucketctl's own (a scraper among them, far
// above its rate) and one or two of every other application, with their articles' limits.
func Keys(prefix string) []*Key {
	p := func(s string) string { return prefix + s }
	return []*Key{
		{Key: p("api:scraper:203.0.113.9"), Spec: bucket.Spec{Capacity: 10, Rate: 2}, RPS: 12},
		{Key: p("api:user:alice"), Spec: bucket.Spec{Capacity: 20, Rate: 5}, RPS: 4, Burst: 15, BurstEvery: 12 * time.Second, FirstBurst: 3 * time.Second},
		{Key: p("api:user:bob"), Spec: bucket.Spec{Capacity: 20, Rate: 5}, RPS: 7},
		{Key: p("api:search"), Spec: bucket.Spec{Capacity: 50, Rate: 20}, RPS: 15, Burst: 60, BurstEvery: 8 * time.Second, FirstBurst: 2 * time.Second},
		{Key: p("api:login:10.0.0.7"), Spec: bucket.Spec{Capacity: 5, Rate: 0.5}, RPS: 0.8},
		{Key: p("global"), Spec: bucket.Spec{Capacity: 200, Rate: 100}, RPS: 60, Burst: 150, BurstEvery: 10 * time.Second, FirstBurst: 4 * time.Second},

		{Key: p("webman:ratelimit:/api/products/hot"), App: Apps["webman"], Spec: bucket.Spec{Capacity: 50, Rate: 10}, Start: 12,
			RPS: 11, Burst: 40, BurstEvery: 9 * time.Second, FirstBurst: 3 * time.Second},
		{Key: p("gobench:user:7"), App: Apps["go-bench"], Spec: bucket.Spec{Capacity: 10, Rate: 10}, Start: 3, RPS: 15},
		{Key: p("spring:rate_limit:api:user_123"), App: Apps["spring"], Spec: bucket.Spec{Capacity: 100, Rate: 1}, Start: 40, RPS: 3},
		{Key: p("multitier:rl:user:42:1"), App: Apps["multi-tier"], Spec: bucket.Spec{Capacity: 50, Rate: 10}, Start: 7.5,
			RPS: 9, Burst: 30, BurstEvery: 7 * time.Second, FirstBurst: 5 * time.Second},
		{Key: p("multitier:rl:ep:9f86d081:2"), App: Apps["multi-tier"], Spec: bucket.Spec{Capacity: 40, Rate: 20}, RPS: 25},
		{Key: p("rate:api-ratelimit@file:203.0.113.50"), App: Apps["traefik"], Spec: bucket.Spec{Capacity: 20, Rate: 10}, Start: 6, RPS: 9},
		{Key: p("@upstash/ratelimit:user_42"), App: Apps["upstash"], Spec: bucket.Spec{Capacity: 30, Rate: 5}, Start: 10, RPS: 4},
		{Key: p("grs:198.51.100.23"), App: Apps["go-redisstore"], Spec: bucket.Spec{Capacity: 60, Rate: 1}, Start: 20, RPS: 0.8},
		{Key: p("express:rate:user:42"), App: Apps["express"], Spec: bucket.Spec{Capacity: 100, Rate: 10}, Start: 55,
			RPS: 8, Burst: 80, BurstEvery: 15 * time.Second, FirstBurst: 6 * time.Second},
		// Its key names are its own: the prefix goes inside the hash tag.
		{Key: "request_rate_limiter.{" + prefix + "checkout.user-9}.tokens", App: Apps["spring-cloud-gateway"],
			Spec: bucket.Spec{Capacity: 30, Rate: 5}, Start: 9, RPS: 6, Burst: 25, BurstEvery: 11 * time.Second, FirstBurst: 4 * time.Second},
		{Key: "{" + prefix + "orders:user-7}state", App: Apps["mennanov"], Spec: bucket.Spec{Capacity: 25, Rate: 4}, Start: 8, RPS: 5,
			Burst: 20, BurstEvery: 13 * time.Second, FirstBurst: 5 * time.Second},
		{Key: "{" + prefix + "search:ip-9}available", App: Apps["mennanov-legacy"], Spec: bucket.Spec{Capacity: 15, Rate: 2}, Start: 6, RPS: 2.5},
	}
}

// Resolver gives each demo key its layout and spec, as a config rule would.
func Resolver(keys []*Key) bucket.Resolver {
	by := make(map[string]*Key, len(keys))
	for _, k := range keys {
		by[k.Key] = k
	}
	return func(key string) bucket.Target {
		k, ok := by[key]
		if !ok {
			return bucket.Target{}
		}
		l := k.Layout()
		return bucket.Target{Layout: &l, Spec: k.Spec, Source: "demo"}
	}
}

// Seed writes the keys' start levels in their own layouts.
func Seed(ctx context.Context, st *bucket.Store, keys []*Key) error {
	for _, k := range keys {
		if k.Start == 0 {
			continue
		}
		if _, err := st.Reset(ctx, k.Key, k.Layout(), k.Spec, bucket.ResetTo{Tokens: k.Start}); err != nil {
			return err
		}
	}
	return nil
}

// Run drives every key until ctx ends and returns when all traffic has stopped.
func Run(ctx context.Context, st *bucket.Store, keys []*Key) {
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() { k.Drive(ctx, st, uint64(i)) })
	}
	wg.Wait()
}

// Drive sends k's arrivals until ctx ends.
func (k *Key) Drive(ctx context.Context, st *bucket.Store, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	start := time.Now()
	nextBurst := start.Add(k.FirstBurst)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(rng.ExpFloat64() / k.RPS * float64(time.Second))):
		}
		k.take(ctx, st)
		if k.Burst > 0 && !time.Now().Before(nextBurst) {
			for i := 0; i < k.Burst && ctx.Err() == nil; i++ {
				k.take(ctx, st)
			}
			nextBurst = time.Now().Add(k.BurstEvery)
		}
	}
}

func (k *Key) take(ctx context.Context, st *bucket.Store) {
	var ok bool
	var err error
	if k.App == nil {
		var r bucket.Result
		r, err = st.Take(ctx, k.Key, k.Spec, 1)
		ok = r.Allowed
	} else {
		ok, err = k.App.Take(ctx, st.Redis(), k.Key, k.Spec, time.Now())
	}
	switch {
	case err != nil:
		if ctx.Err() == nil {
			k.Errors.Add(1)
		}
	case ok:
		k.Allowed.Add(1)
	default:
		k.Denied.Add(1)
	}
}
