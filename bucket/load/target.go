package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// ErrNotBucket is a key a run must not write: it exists and is not a native bucket.
var ErrNotBucket = errors.New("not a native bucket")

// nativeFields are the fields of a native bucket: the first four always, the decision
// counters once a decision of their kind was made.
var nativeFields = []string{"tokens", "ts", "capacity", "rate", "allowed", "denied"}

const requiredFields = 4

// Stored is a native bucket as a run reads it.
type Stored struct {
	Level           bucket.Level
	Spec            bucket.Spec
	Allowed, Denied int64
}

// readShape queues what nativeShape needs: HLEN, and HMGET of the native fields. Neither
// reads another field's value, and on a key of another type both are error replies.
func readShape(ctx context.Context, p redis.Cmdable, key string) (*redis.IntCmd, *redis.SliceCmd) {
	return p.HLen(ctx, key), p.HMGet(ctx, key, nativeFields...)
}

// nativeShape checks that a hash of n fields whose native fields read vals is a native
// bucket: tokens, ts, capacity and rate, perhaps allowed and denied, nothing else, each a
// finite number (capacity and rate > 0, tokens and the counters >= 0). problem says what is
// wrong, without any field's value.
func nativeShape(n int64, vals []interface{}) (s Stored, problem string) {
	var have int64
	var missing []string
	num := make([]float64, len(nativeFields))
	for i, f := range nativeFields {
		v, ok := vals[i].(string)
		if !ok {
			if i < requiredFields {
				missing = append(missing, f)
			}
			continue
		}
		have++
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return s, "has a " + f + " that is not a finite number"
		}
		num[i] = x
	}
	switch {
	case n > have:
		return s, fmt.Sprintf("is a hash with %d field(s) a native bucket does not have", n-have)
	case len(missing) > 0:
		return s, "is a hash without the native field(s) " + strings.Join(missing, ", ")
	case num[2] <= 0 || num[3] <= 0:
		return s, "has a capacity or rate that is not positive"
	case num[0] < 0 || num[4] < 0 || num[5] < 0:
		return s, "has negative tokens or counters"
	case math.Abs(num[1]) >= 1<<62:
		return s, "has a ts out of range"
	}
	s.Level = bucket.Level{Tokens: num[0], TS: int64(num[1])}
	s.Spec = bucket.Spec{Capacity: num[2], Rate: num[3]}
	s.Allowed, s.Denied = int64(num[4]), int64(num[5])
	return s, ""
}

// Target is what a key holds before a run.
type Target struct {
	Key string
	// Type is the Redis type ("none": the key does not exist).
	Type string
	// Problem says why an existing key is not a native bucket; "" for a native bucket or
	// a missing key.
	Problem string
	// Stored is the native bucket's content.
	Stored Stored
}

// Exists reports whether the key exists.
func (t Target) Exists() bool { return t.Type != "none" }

// IsBucket reports whether the key is a native bucket.
func (t Target) IsBucket() bool { return t.Exists() && t.Problem == "" }

// Examine reads what keys hold, in one round trip per node: TYPE, HLEN and HMGET of the
// native fields. It reads no other field's value and nothing of a key of another type.
func Examine(ctx context.Context, rdb bucket.Client, keys ...string) ([]Target, error) {
	types := make([]*redis.StatusCmd, len(keys))
	lens := make([]*redis.IntCmd, len(keys))
	vals := make([]*redis.SliceCmd, len(keys))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
			lens[i], vals[i] = readShape(ctx, p, k)
		}
		return nil
	})
	out := make([]Target, len(keys))
	for i, k := range keys {
		typ, err := types[i].Result()
		if err != nil {
			return nil, err
		}
		t := Target{Key: k, Type: typ}
		switch typ {
		case "none":
		case "hash":
			n, err := lens[i].Result()
			if err != nil {
				return nil, err
			}
			v, err := vals[i].Result()
			if err != nil {
				return nil, err
			}
			t.Stored, t.Problem = nativeShape(n, v)
		default:
			t.Problem = "holds a " + typ + ", not a hash"
		}
		out[i] = t
	}
	return out, nil
}

// NotBucketError is a run refused because its key is not a native bucket.
func NotBucketError(t Target) error {
	return fmt.Errorf("%w: %q %s; load writes only into native buckets (nothing was touched)", ErrNotBucket, t.Key, t.Problem)
}

// Plan is what a run will do to its key.
type Plan struct {
	Target Target
	// Spec is the spec the run uses; StoredSpec says it is the bucket's own, which the
	// run leaves as stored.
	Spec       bucket.Spec
	StoredSpec bool
	// Changes are the fields the run writes, then "TTL".
	Changes []string
}

// PlanFor plans a run on t: a missing key is created with spec; an existing native bucket
// keeps its stored capacity and rate unless capacity or rate (> 0) are given. A key that is
// not a native bucket is an error wrapping ErrNotBucket.
func PlanFor(t Target, spec bucket.Spec, capacityGiven, rateGiven bool) (Plan, error) {
	if !t.Exists() {
		return Plan{Target: t, Spec: spec, Changes: append(append([]string{}, nativeFields...), "TTL")}, nil
	}
	if !t.IsBucket() {
		return Plan{Target: t}, NotBucketError(t)
	}
	p := Plan{Target: t, Spec: t.Stored.Spec, Changes: []string{"tokens", "ts", "allowed", "denied"}}
	if capacityGiven && spec.Capacity != p.Spec.Capacity {
		p.Spec.Capacity = spec.Capacity
		p.Changes = append(p.Changes, "capacity")
	}
	if rateGiven && spec.Rate != p.Spec.Rate {
		p.Spec.Rate = spec.Rate
		p.Changes = append(p.Changes, "rate")
	}
	p.StoredSpec = p.Spec == t.Stored.Spec
	p.Changes = append(p.Changes, "TTL")
	return p, nil
}

// cleanupScript deletes a key a run created, if it still is a native bucket.
var cleanupScript = bucket.LazyScript(func() string {
	return `
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t ~= 'hash' then return -1 end
local f = redis.call('HGETALL', KEYS[1])
local native = {tokens=true, ts=true, capacity=true, rate=true, allowed=true, denied=true}
for i = 1, #f, 2 do
  local v = tonumber(f[i + 1])
  if not native[f[i]] or not v or v ~= v or v == math.huge or v == -math.huge then return -1 end
end
return redis.call('DEL', KEYS[1])
`
})

// Cleanup deletes a key a run created, in one script that checks it still is a native
// bucket: a key something else wrote meanwhile is left as it is (an error wrapping
// ErrNotBucket). A key already gone is no error.
func Cleanup(ctx context.Context, rdb bucket.Client, key string) error {
	n, err := cleanupScript().Run(ctx, rdb, []string{key}).Int64()
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("%w: %q is no longer a native bucket, so it was not deleted", ErrNotBucket, key)
	}
	return nil
}
