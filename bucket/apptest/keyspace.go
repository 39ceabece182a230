package apptest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A hostile keyspace for identity tests: keys of other kinds that look like buckets in some
// way, planted beside real buckets. None of them may ever be written or deleted by bucketctl.

// Lookalike is one planted key: its name and what it imitates.
type Lookalike struct {
	Key, What string
}

// PlantLookalikes writes more than 30 keys that are not buckets into c, at the server's time
// now: values that hold their own deadline (Unix ns, ms, s and a custom epoch, with a PXAT
// or EXAT TTL at the same instant), leases and locks, counters, foreign numerals in
// bucket-shaped hashes (inf, NaN, Infinity, 0x10, " 5", 1e999), native-shaped hashes with
// corrupt counters or spec, hashes with extra fields, two-key look-alikes and other types.
func PlantLookalikes(ctx context.Context, c redis.UniversalClient, now time.Time) ([]Lookalike, error) {
	var out []Lookalike
	var errs []error
	add := func(key, what string, err error) {
		out = append(out, Lookalike{key, what})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	at := func(d time.Duration) time.Time { return now.Add(d).Truncate(time.Millisecond) }
	ns := func(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }
	setAt := func(key, v, what string, t time.Time) {
		add(key, what, c.Do(ctx, "SET", key, v, "PXAT", t.UnixMilli()).Err())
	}
	setEx := func(key, v, what string, ttl time.Duration) { add(key, what, c.Set(ctx, key, v, ttl).Err()) }
	hset := func(key, what string, kv ...any) { add(key, what, c.HSet(ctx, key, kv...).Err()) }

	// Values that hold their own deadline, with the TTL at that same instant.
	d1 := at(time.Hour)
	setAt("session:42:expires_at", ns(d1), "a session deadline in Unix ns, PXAT the same instant", d1)
	d2 := at(30 * time.Minute)
	setAt("session:43:expires_at", strconv.FormatInt(d2.UnixMilli(), 10), "a deadline in Unix ms, PXAT the same instant", d2)
	d3 := now.Add(10 * time.Minute).Truncate(time.Second)
	add("session:44:expires_at", "a deadline in Unix s, EXAT the same instant",
		c.Do(ctx, "SET", "session:44:expires_at", strconv.FormatInt(d3.Unix(), 10), "EXAT", d3.Unix()).Err())
	d4 := now.Add(2 * time.Hour).Truncate(time.Second)
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	add("quota:acme:deadline", "a quota deadline in seconds since a custom epoch, EXAT the same instant",
		c.Do(ctx, "SET", "quota:acme:deadline", strconv.FormatInt(d4.Unix()-epoch.Unix(), 10), "EXAT", d4.Unix()).Err())
	d5 := at(5 * time.Second)
	setAt("rate:quota:9", strconv.FormatFloat(float64(d5.UnixMicro())/1e6-1483228800, 'f', 6, 64),
		"a deadline in seconds since 2017 under redis_rate's prefix, PXAT the same instant", d5)
	d6 := at(20 * time.Second)
	setAt("lock:order:7", ns(d6), "a lock holding its deadline (Unix ns), PXAT the same instant", d6)
	d7 := at(15 * time.Second)
	setAt("lease:worker:3", strconv.FormatInt(d7.UnixMilli(), 10), "a lease holding its deadline (Unix ms)", d7)
	setEx("lease:worker:4", "1", "a lease flag with a TTL", 15*time.Second)
	setEx("lock:job:9", "worker-3", "a lock holding its owner", 30*time.Second)
	d8 := at(90 * time.Second)
	setAt("otp:77:valid_until", strconv.FormatFloat(float64(d8.UnixMicro())/1e6, 'f', 3, 64), "a deadline in float Unix seconds", d8)

	// Counters.
	setEx("hits:today", "1500", "a counter with a TTL of its own", 24*time.Hour)
	setEx("counter:plain", "42", "a counter", 0)
	setEx("counter:neg", "-5", "a negative counter", 0)
	setEx("counter:float", "3.5", "a float gauge", 0)
	setEx("counter:huge", "1e999", "an overflowing number", 0)

	// Foreign numerals in bucket-shaped hashes (native, express and go-bench shapes).
	for i, v := range []string{"inf", "NaN", "Infinity", "0x10", " 5", "1e999", "5 ", "-inf"} {
		hset(fmt.Sprintf("nat:numeral:%d", i), "native shape with tokens="+strconv.Quote(v),
			"tokens", v, "ts", now.UnixMicro(), "capacity", "10", "rate", "1")
	}
	hset("exp:numeral:ts", "express shape with last_refill=1e999", "tokens", "5", "last_refill", "1e999")
	hset("exp:numeral:hex", "express shape with tokens=0x10", "tokens", "0x10", "last_refill", "1700000000.5")
	hset("gb:numeral:pad", "go-bench shape with a padded ts", "tokens", "5", "ts", " 1700000000000")

	// Native shapes with corrupt counters or spec.
	for _, cc := range []struct{ field, v string }{
		{"allowed", "-5"}, {"allowed", "1e999"}, {"denied", "-1"}, {"capacity", "-5"},
		{"rate", "0"}, {"capacity", "1e999"}, {"tokens", "-1"}, {"allowed", "1e300"},
	} {
		f := map[string]any{"tokens": "5", "ts": strconv.FormatInt(now.UnixMicro(), 10), "capacity": "10", "rate": "1", "allowed": "3", "denied": "1"}
		f[cc.field] = cc.v
		hset(fmt.Sprintf("nat:corrupt:%s:%s", cc.field, cc.v), "native shape with "+cc.field+"="+cc.v, f)
	}

	// Hashes with extra fields.
	hset("nat:extra", "native fields and an owner", "tokens", "5", "ts", now.UnixMicro(), "capacity", "10", "rate", "1", "owner", "bob")
	hset("exp:extra", "express fields and an email", "tokens", "5", "last_refill", "1700000000.5", "email", "a@x")

	// Two-key look-alikes: a level with a non-numeric time key, a foreign level with a
	// numeric one, a time key alone.
	setEx("wm:job", "7", "a number beside a non-numeric :last_time", 0)
	setEx("wm:job:last_time", "yesterday", "a non-numeric time key", 0)
	setEx("wm:inf", "inf", "inf beside a numeric :last_time", 0)
	setEx("wm:inf:last_time", "1700000000", "the time key of a foreign level", 0)
	setEx("wm:orphan:last_time", "1700000000.5", "a time key without its level", 0)

	// Other types holding bucket-like members.
	add("typ:list", "a list", c.RPush(ctx, "typ:list", "tokens", "5").Err())
	add("typ:set", "a set", c.SAdd(ctx, "typ:set", "tokens", "ts").Err())
	add("typ:zset", "a sorted set", c.ZAdd(ctx, "typ:zset", redis.Z{Score: 5, Member: "tokens"}).Err())
	add("typ:stream", "a stream", c.XAdd(ctx, &redis.XAddArgs{Stream: "typ:stream", Values: []any{"tokens", "5", "ts", "1"}}).Err())

	if len(errs) > 0 {
		return out, fmt.Errorf("planting look-alikes: %v", errs)
	}
	return out, nil
}

// KeyState is what a key holds: its DUMP and PTTL.
type KeyState struct {
	Dump string
	PTTL time.Duration
}

// Snapshot reads the DUMP and PTTL of every key.
func Snapshot(ctx context.Context, c redis.Cmdable, keys []string) (map[string]KeyState, error) {
	out := make(map[string]KeyState, len(keys))
	for _, k := range keys {
		d, err := c.Dump(ctx, k).Result()
		if err != nil && err != redis.Nil {
			return nil, err
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			return nil, err
		}
		out[k] = KeyState{Dump: d, PTTL: ttl}
	}
	return out, nil
}

// Changes lists the keys whose DUMP differs between before and after, or whose TTL was
// set, removed or re-set: a TTL may only have counted down (by at most elapsed), and a key
// is gone only if its own TTL ran out within elapsed.
func Changes(before, after map[string]KeyState, elapsed time.Duration) []string {
	var changed []string
	for k, b := range before {
		a := after[k]
		switch {
		case a.Dump == "" && b.PTTL >= 0 && b.PTTL <= elapsed:
			// expired on its own
		case a.Dump != b.Dump:
			changed = append(changed, k+" (value)")
		case (b.PTTL < 0) != (a.PTTL < 0) || b.PTTL < 0 && a.PTTL != b.PTTL:
			changed = append(changed, fmt.Sprintf("%s (TTL %s, was %s)", k, a.PTTL, b.PTTL))
		case b.PTTL >= 0 && (a.PTTL > b.PTTL || a.PTTL < b.PTTL-elapsed-time.Second):
			changed = append(changed, fmt.Sprintf("%s (TTL %s, was %s)", k, a.PTTL, b.PTTL))
		}
	}
	return changed
}
