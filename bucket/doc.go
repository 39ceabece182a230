// Package bucket is a token-bucket rate limiter in Redis, and the reader of the buckets
// other applications keep there.
//
// # Deciding
//
// A Store runs bucketctl's native script over go-redis: Take consumes tokens atomically in
// one round trip, Peek computes the same decision without writing, TakeAll decides several
// tiers all or nothing. A Spec is a bucket's capacity and refill rate; a Result is one
// decision (allowed, tokens remaining, when to retry, when the bucket is full again).
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	store := bucket.NewStore(rdb)
//	res, err := store.Take(ctx, "rl:user:42", bucket.Spec{Capacity: 10, Rate: 5}, 1)
//	if err != nil {
//		return err // ErrInvalid, or a Redis error; an *UncertainError may have been applied
//	}
//	if !res.Allowed {
//		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
//	}
//
// # Layouts, reading and resetting
//
// A Layout says how an application stores its buckets (a hash with tokens and a time, two
// string keys, a GCRA TAT): NativeLayout is bucketctl's own (native.go), Presets the
// applications it reads, each with its owner's Model (layout_NAME.go) in the owner's own
// arithmetic and time resolution. Inspect reads keys as State values (package scan reads a
// keyspace the same way); State.Decide is the one answer to what the application would
// decide, which every verb shows. Reset and ResetMany write or delete a bucket only when
// it is, inside the script that writes, a bucket of the declared or verified layout.
//
// The shape rule: a key is a bucket of a layout only if its whole shape fits (a hash holds
// exactly the layout's fields, each a plain number; a two-key bucket is a numeric level and
// time; a GCRA TAT is in its library's form with the TTL the library sets). Anything else
// is not a bucket and is never written, even where a rule names a layout. A bucket is
// written only where it is native (tagged) or its layout is declared; one recognised by
// its shape alone is a guess (State.Guess), read and never written.
//
// # Errors
//
// Errors are matched with errors.Is against the Err values (ErrInvalid, ErrNoSpec,
// ErrWrongType, ErrCorrupt, ErrChanged, ...); errors about one key come as a *KeyError, a
// TakeMany's failures as a *BatchError, a decision sent without a reply as an *UncertainError.
//
// # Sub-packages
//
// The sub-packages hold what builds on a Store: scan (the one keyspace scan, and top's
// bounded view of a keyspace), audit (what is wrong in a keyspace), hot (the buckets written
// now), load (load tests), resetplan (resets of many keys), rules (the config file's key
// patterns), units (typed values), httplimit (HTTP middleware), and redistest and sandbox
// (real redis-server processes, for the tests and the demo). Below the package: rediserr
// (reading Redis errors), cost (counting what Redis is sent) and slot (a key's Cluster
// slot). The package never prints and imports no CLI or terminal code.
package bucket
