package bucket_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/sandbox"
)

// The refill model needs no Redis: a bucket of 3 tokens refilled at 1 token per second
// takes a burst of 5 requests at t=0, then one more 1.5 s later.
func ExampleSpec_Take() {
	spec := bucket.Spec{Capacity: 3, Rate: 1}
	var level bucket.Level
	exists := false // a missing bucket starts full
	for i := range 5 {
		var r bucket.Result
		level, r = spec.Take(level, exists, 0, 1)
		exists = true
		fmt.Printf("request %d: allowed=%v remaining=%g retry-after=%v\n", i+1, r.Allowed, r.Remaining, r.RetryAfter)
	}
	_, r := spec.Take(level, exists, 1_500_000, 1) // now in microseconds
	fmt.Printf("after 1.5s: allowed=%v remaining=%g\n", r.Allowed, r.Remaining)
	// Output:
	// request 1: allowed=true remaining=2 retry-after=0s
	// request 2: allowed=true remaining=1 retry-after=0s
	// request 3: allowed=true remaining=0 retry-after=1s
	// request 4: allowed=false remaining=0 retry-after=1s
	// request 5: allowed=false remaining=0 retry-after=1s
	// after 1.5s: allowed=true remaining=0.5
}

// TakeAllModel is the multi-tier decision in process: the user's bucket is full, the
// global one holds half a token, so the request is denied and the user keeps its tokens.
func ExampleTakeAllModel() {
	tiers := []bucket.Tier{
		{Name: "user", Key: "rl:{user42}:user", Spec: bucket.Spec{Capacity: 10, Rate: 1}, Cost: 1},
		{Name: "global", Key: "rl:{user42}:global", Spec: bucket.Spec{Capacity: 100, Rate: 10}, Cost: 1},
	}
	levels := []bucket.Level{{}, {Tokens: 0.5, TS: 0}}
	exists := []bool{false, true}
	_, _, r := bucket.TakeAllModel(tiers, levels, exists, 0)
	by, _ := r.DeniedBy()
	fmt.Printf("allowed=%v denied by %s, retry after %v\n", r.Allowed, by.Name, r.RetryAfter())
	for _, t := range r.Tiers {
		fmt.Printf("%s: had its cost=%v remaining=%g\n", t.Name, t.Allowed, t.Remaining)
	}
	// Output:
	// allowed=false denied by global, retry after 50ms
	// user: had its cost=true remaining=10
	// global: had its cost=false remaining=0.5
}

// A burst of 12 requests against a user tier of 10 tokens and an overall tier of 5, both
// refilling once a day: the overall tier allows 5 and denies the rest, and the denied
// requests take nothing from the user's bucket.
func ExampleStore_TakeAll() {
	ctx := context.Background()
	sb, err := sandbox.Start(ctx, sandbox.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	rdb := redis.NewClient(&redis.Options{Addr: sb.Addr(), MaxRetries: -1})
	defer rdb.Close()
	store := bucket.NewStore(rdb)

	day := 24 * 60 * 60.0
	tiers := []bucket.Tier{
		{Name: "user", Key: "rl:{user42}:user", Spec: bucket.Spec{Capacity: 10, Rate: 10 / day}, Cost: 1},
		{Name: "overall", Key: "rl:{user42}:overall", Spec: bucket.Spec{Capacity: 5, Rate: 5 / day}, Cost: 1},
	}
	allowed, denied := 0, map[string]int{}
	var last bucket.MultiResult
	for range 12 {
		r, err := store.TakeAll(ctx, tiers)
		if err != nil {
			fmt.Println(err)
			return
		}
		if r.Allowed {
			allowed++
		} else if by, ok := r.DeniedBy(); ok {
			denied[by.Name]++
		}
		last = r
	}
	fmt.Printf("allowed %d, denied %v\n", allowed, denied)
	fmt.Printf("user bucket keeps %d tokens\n", int(last.Tiers[0].Remaining))
	// Output:
	// allowed 5, denied map[overall:7]
	// user bucket keeps 5 tokens
}

// startRedis starts a redis-server of the example's own (an application passes its own
// client to NewStore).
func startRedis() (rdb *redis.Client, stop func(), err error) {
	sb, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		return nil, nil, err
	}
	rdb = redis.NewClient(&redis.Options{Addr: sb.Addr(), MaxRetries: -1})
	return rdb, func() { _ = rdb.Close(); sb.Close() }, nil
}

// Take decides one request: a bucket of 3 tokens refilled at 1 token an hour allows three
// requests and denies the fourth.
func ExampleStore_Take() {
	rdb, stop, err := startRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()
	store := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 3, Rate: 1.0 / 3600}
	for i := range 4 {
		r, err := store.Take(ctx, "rl:user:42", spec, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("request %d: allowed=%v remaining=%.0f\n", i+1, r.Allowed, r.Remaining)
	}
	// Output:
	// request 1: allowed=true remaining=2
	// request 2: allowed=true remaining=1
	// request 3: allowed=true remaining=0
	// request 4: allowed=false remaining=0
}

// Peek answers what Take would decide, and takes nothing: the bucket holds what it held.
func ExampleStore_Peek() {
	rdb, stop, err := startRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()
	store := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 3, Rate: 1.0 / 3600}
	if _, err := store.Take(ctx, "rl:user:42", spec, 2); err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		r, err := store.Peek(ctx, "rl:user:42", spec, 1)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("a request of 1 would be allowed=%v; the bucket holds %.0f\n", r.Allowed, r.Remaining)
	}
	// Output:
	// a request of 1 would be allowed=true; the bucket holds 1
	// a request of 1 would be allowed=true; the bucket holds 1
}

// Inspect reads buckets as they are stored: the layout recognised, the spec the native
// bucket stores, the level refilled to the server's time and the decision counters.
func ExampleStore_Inspect() {
	rdb, stop, err := startRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()
	store := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 10, Rate: 1.0 / 3600}
	for range 3 {
		if _, err := store.Take(ctx, "rl:user:42", spec, 1); err != nil {
			fmt.Println(err)
			return
		}
	}
	states, err := store.Inspect(ctx, []string{"rl:user:42", "rl:user:7"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range states {
		fmt.Printf("%s: exists=%v layout=%s capacity=%g tokens=%.0f allowed=%d\n",
			st.Key, st.Exists, st.Layout.Name, st.Spec.Capacity, st.Tokens, st.Allowed)
	}
	// Output:
	// rl:user:42: exists=true layout=native capacity=10 tokens=7 allowed=3
	// rl:user:7: exists=false layout=native capacity=0 tokens=0 allowed=0
}

// Reset writes a level into a bucket of a declared layout, checked inside the script that
// writes: here an emptied native bucket is given 3 tokens back.
func ExampleStore_Reset() {
	rdb, stop, err := startRedis()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()
	store := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 5, Rate: 1.0 / 3600}
	if _, err := store.Take(ctx, "rl:user:42", spec, 5); err != nil {
		fmt.Println(err)
		return
	}
	n, err := store.Reset(ctx, "rl:user:42", bucket.NativeLayout, spec, bucket.ResetTo{Tokens: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := store.Peek(ctx, "rl:user:42", spec, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("keys written: %d; a request now: allowed=%v; the bucket holds %.0f\n", n, r.Allowed, r.Remaining)
	// A string that is not a bucket is never written.
	rdb.Set(ctx, "session:42", "opaque", 0)
	_, err = store.Reset(ctx, "session:42", bucket.NativeLayout, spec, bucket.ResetTo{Tokens: 3})
	fmt.Println(errors.Is(err, bucket.ErrChanged) || errors.Is(err, bucket.ErrWrongType), rdb.Get(ctx, "session:42").Val())
	// Output:
	// keys written: 1; a request now: allowed=true; the bucket holds 3
	// true opaque
}
