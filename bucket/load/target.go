package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/scripts"
)

// ErrNotBucket is a key a run must not write: it exists and is not a native bucket.
var ErrNotBucket = errors.New("not a native bucket")

// Stored is a native bucket as a run reads it.
type Stored struct {
	Level           bucket.Level
	Spec            bucket.Spec
	Allowed, Denied int64
}

func nativeValue(v string) (s Stored, problem string) {
	if !bucket.IsNativeValue(v) {
		return s, "is a string without the native bucket's tag"
	}
	n, p := bucket.DecodeNative(v)
	if p != "" {
		return s, "is corrupt: " + p
	}
	s.Level = bucket.Level{Tokens: n.Tokens, TS: int64(math.Round(n.TS))}
	s.Spec = bucket.Spec{Capacity: n.Capacity, Rate: n.Rate}
	s.Allowed, s.Denied = int64(n.Allowed), int64(n.Denied)
	return s, ""
}

// nativeShape reads a hash of n fields, vals of them native, as bucket.ClassifyHash does.
func nativeShape(n int64, vals []interface{}) (s Stored, problem string) {
	fields := make(map[string]string, len(hashFields))
	for i, f := range hashFields {
		if v, ok := vals[i].(string); ok {
			fields[f] = v
		}
	}
	if n > int64(len(fields)) {
		return s, fmt.Sprintf("is a hash with %d field(s) a native bucket does not have", n-int64(len(fields)))
	}
	native := bucket.NativeHashLayout
	st := bucket.ClassifyHash("", fields, -1, 0, bucket.Target{Layout: &native})
	if st.Problem != "" {
		return s, "is " + st.Problem
	}
	s.Level, s.Spec = st.Stored, st.Spec
	s.Allowed, s.Denied = st.Allowed, st.Denied
	return s, ""
}

var hashFields = []string{"tokens", "ts", "capacity", "rate", "allowed", "denied"}

// Target is what a key holds before a run.
type Target struct {
	Key     string
	Type    string // the Redis type ("none": the key does not exist)
	Problem string // why an existing key is not a native bucket
	Stored  Stored
}

func (t Target) Exists() bool { return t.Type != "none" }

// IsBucket reports whether the key is a native bucket.
func (t Target) IsBucket() bool { return t.Exists() && t.Problem == "" }

// Examine reads what keys hold, in one round trip per node (TYPE, GETRANGE, HLEN, HMGET).
func Examine(ctx context.Context, rdb bucket.Client, keys ...string) ([]Target, error) {
	types := make([]*redis.StatusCmd, len(keys))
	gets := make([]*redis.StringCmd, len(keys))
	lens := make([]*redis.IntCmd, len(keys))
	vals := make([]*redis.SliceCmd, len(keys))
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
			gets[i] = p.GetRange(ctx, k, 0, 63)
			lens[i], vals[i] = p.HLen(ctx, k), p.HMGet(ctx, k, hashFields...)
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
		case "string":
			if err := gets[i].Err(); err != nil {
				return nil, err
			}
			t.Stored, t.Problem = nativeValue(gets[i].Val())
		case "hash":
			if err := cmp.Or(lens[i].Err(), vals[i].Err()); err != nil {
				return nil, err
			}
			t.Stored, t.Problem = nativeShape(lens[i].Val(), vals[i].Val())
		default:
			t.Problem = "holds a " + typ + ", not a native bucket's string"
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
	Target     Target
	Spec       bucket.Spec
	StoredSpec bool     // Spec is the bucket's own, left as stored
	Changes    []string // the fields the run writes, then "TTL"
}

// PlanFor plans a run on t: a missing key is created with spec, a native bucket keeps its
// own (a differing given one is bucket.ErrSpecDiffers), another key is ErrNotBucket.
func PlanFor(t Target, spec bucket.Spec, capacityGiven, rateGiven bool) (Plan, error) {
	if !t.Exists() {
		return Plan{Target: t, Spec: spec, Changes: append(append([]string{}, hashFields...), "TTL")}, nil
	}
	if !t.IsBucket() {
		return Plan{Target: t}, NotBucketError(t)
	}
	p := Plan{Target: t, Spec: t.Stored.Spec, Changes: []string{"tokens", "ts", "allowed", "denied"}}
	if (capacityGiven && spec.Capacity != p.Spec.Capacity) || (rateGiven && spec.Rate != p.Spec.Rate) {
		return p, &bucket.SpecDiffersError{Key: t.Key, Stored: t.Stored.Spec}
	}
	p.StoredSpec = true
	p.Changes = append(p.Changes, "TTL")
	return p, nil
}

var cleanupScript = scripts.Lazy(func() string {
	return scripts.Prelude + scripts.PreludeCall + `
local t = redis.call('TYPE', KEYS[1]).ok
if t == 'none' then return 0 end
if t == 'string' then
  if redis.call('STRLEN', KEYS[1]) ~= NATIVE_LEN or tagged(redis.call('GET', KEYS[1])) == nil then return -1 end
elseif t ~= 'hash' or native(redis.call('HGETALL', KEYS[1])) == nil then
  return -1
end
return redis.call('DEL', KEYS[1])
`
})

// Cleanup deletes a key a run created if it still is a native bucket (else ErrNotBucket).
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
