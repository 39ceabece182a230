// Package bucket is a token-bucket rate limiter in Redis, and the reader of the buckets
// other applications keep there.
//
// A Store runs bucketctl's native script: Take consumes tokens atomically in one round
// trip, Peek decides without writing, TakeAll decides several tiers all or nothing. A Spec
// is a bucket's capacity and refill rate; a Result is one decision.
//
//	store := bucket.NewStore(redis.NewClient(&redis.Options{Addr: "localhost:6379"}))
//	res, err := store.Take(ctx, "rl:user:42", bucket.Spec{Capacity: 10, Rate: 5}, 1)
//
// A Layout says how an application stores its buckets: NativeLayout is bucketctl's own
// (native.go), Presets the applications it reads, each with its owner's Model
// (layout_NAME.go). Inspect reads keys as State values; State.Decide is what the
// application would decide. A key is written only where it is native or its layout is
// declared; one recognised by its shape alone is a guess (State.Guess).
//
// Errors match the Err values with errors.Is; errors about one key come as a *KeyError, a
// TakeMany's as a *BatchError, a decision sent without a reply as an *UncertainError.
//
// Sub-packages build on a Store (scan, audit, hot, load, demo, rules, units,
// httplimit; the test harnesses redistest and sandbox) or sit below it (rediserr, cost,
// slot). The package never prints.
package bucket
