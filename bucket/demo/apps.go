package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/scripts"
)

// App decides one request the way an application does, in its own layout.
type App struct {
	Layout  string                    // the preset its buckets read as
	script  func() *redis.Script      // its script (set from Layout)
	keys    func(key string) []string // nil: the key alone
	args    func(spec bucket.Spec, now time.Time) []any
	allowed func(reply any, spec bucket.Spec) bool // nil: the reply, or its first element, is 1
	// decide, where set, decides in Go instead of a script.
	decide func(ctx context.Context, rdb redis.Cmdable, key string, spec bucket.Spec, now time.Time) (bool, error)
}

// Key is the key the application keeps the bucket named name at.
func (a *App) Key(name string) string {
	if a.Layout == "mennanov" {
		return "{" + name + "}state"
	}
	return bucket.Presets[a.Layout].BucketKey(name)
}

// Take decides one request of cost 1 against key, as the application would.
func (a *App) Take(ctx context.Context, rdb redis.Cmdable, key string, spec bucket.Spec, now time.Time) (bool, error) {
	if a.decide != nil {
		return a.decide(ctx, rdb, key, spec, now)
	}
	keys := []string{key}
	if a.keys != nil {
		keys = a.keys(key)
	}
	v, err := a.script().Run(ctx, rdb, keys, a.args(spec, now)...).Result()
	if errors.Is(err, redis.Nil) { // a Lua false: Spring's script returns its boolean
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if a.allowed != nil {
		return a.allowed(v, spec), nil
	}
	if r, ok := v.([]any); ok && len(r) > 0 {
		v = r[0]
	}
	n, _ := v.(int64)
	return n == 1, nil
}

func secondsF(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', 6, 64)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Apps are the applications of the layouts bucketctl knows, by layout name, each with its
// script's keys, arguments and clock (see 'bucketctl help layouts').
var Apps = map[string]*App{
	"webman": {
		keys: func(k string) []string { return []string{k, k + ":last_time"} },
		args: func(s bucket.Spec, now time.Time) []any { return []any{num(s.Capacity), num(s.Rate), secondsF(now)} },
	},
	"go-bench": {args: func(s bucket.Spec, now time.Time) []any {
		return []any{now.UnixMilli(), num(s.Rate), num(s.Capacity), 1, 60_000}
	}},
	"spring": {args: func(s bucket.Spec, _ time.Time) []any { return []any{num(s.Capacity), num(s.Rate), 1} }},
	"multi-tier": {args: func(s bucket.Spec, now time.Time) []any {
		return []any{num(s.Rate), num(s.Capacity), secondsF(now), 1}
	}},
	"traefik": {
		args: func(s bucket.Spec, now time.Time) []any {
			ttl := 2
			if s.Rate < 1 {
				ttl = 1 + int(1/s.Rate)
			}
			return []any{s.Rate / 1e6, int64(s.Capacity), ttl, now.UnixMicro(), bucket.TraefikMaxDelay(s.Rate).Microseconds()}
		},
		allowed: func(v any, s bucket.Spec) bool { // served within the greatest delay
			a, _ := v.([]any)
			if len(a) != 3 {
				return false
			}
			delay, err := strconv.ParseFloat(fmt.Sprint(a[1]), 64)
			return err == nil && time.Duration(delay*float64(time.Microsecond)) <= bucket.TraefikMaxDelay(s.Rate)
		},
	},
	// The dynamic-limit key (none set) shares the key's slot.
	"upstash": {
		keys: func(k string) []string { return []string{k, "{" + k + "}:dynamic:global"} },
		args: func(s bucket.Spec, now time.Time) []any {
			return []any{num(s.Capacity), 1000, num(s.Rate), now.UnixMilli(), 1}
		},
		allowed: func(v any, _ bucket.Spec) bool {
			if a, ok := v.([]any); ok && len(a) == 3 {
				n, ok := a[0].(int64)
				return ok && n >= 0
			}
			return false
		},
	},
	"express": {args: func(s bucket.Spec, now time.Time) []any {
		return []any{num(s.Capacity), num(s.Rate), strconv.FormatFloat(float64(now.UnixMilli())/1000, 'f', 3, 64), 1}
	}},
	"spring-cloud-gateway": {
		keys: func(k string) []string { return bucket.Presets["spring-cloud-gateway"].Keys(k) },
		args: func(s bucket.Spec, _ time.Time) []any { return []any{num(s.Rate), num(s.Capacity), "", 1} },
	},
	"go-redisstore": {
		args: func(s bucket.Spec, now time.Time) []any {
			return []any{now.UnixNano(), uint64(s.Capacity), int64(math.Round(s.Capacity / s.Rate * 1e9))}
		},
		allowed: func(v any, _ bucket.Spec) bool {
			a, _ := v.([]any)
			return len(a) == 4 && a[3] == int64(1)
		},
	},
	"mennanov":        {decide: mennanovTake},
	"mennanov-legacy": {decide: mennanovTake},
}

func init() {
	for name, a := range Apps {
		a.Layout = name
		if a.decide == nil {
			a.script = scripts.Lazy(func() string { return scripts.App(name) })
		}
	}
}

// mennanovTake is mennanov/limiters' TokenBucket.Take(1) over TokenBucketRedis, no race
// check, no TTL (v1.13.0's two-key form for a key {P}available).
func mennanovTake(ctx context.Context, rdb redis.Cmdable, key string, spec bucket.Spec, now time.Time) (bool, error) {
	base, legacy := strings.CutSuffix(key, "available")
	if !legacy {
		base = strings.TrimSuffix(key, "state")
	}
	var last, avail int64
	if v, err := rdb.Get(ctx, key).Result(); !legacy && err == nil {
		var item struct {
			State struct{ Last, Available int64 }
		}
		if err := json.Unmarshal([]byte(v), &item); err != nil {
			return false, err
		}
		last, avail = item.State.Last, item.State.Available
	} else if err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	} else if vs, err := rdb.MGet(ctx, base+"last", base+"available").Result(); err != nil {
		return false, err
	} else if vs[0] != nil && vs[1] != nil {
		last, _ = strconv.ParseInt(vs[0].(string), 10, 64)
		avail, _ = strconv.ParseInt(vs[1].(string), 10, 64)
	}
	capacity, interval, n := int64(spec.Capacity), int64(time.Duration(float64(time.Second)/spec.Rate)), now.UnixNano()
	if last == 0 && avail == 0 { // the zero state is full
		avail = capacity
	}
	if add := (n - last) / interval; add > 0 {
		if add+avail < capacity {
			avail, last = avail+add, n-(n-last)%interval
		} else {
			avail, last = capacity, n
		}
	}
	if avail < 1 {
		return false, nil
	}
	avail--
	if legacy {
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, base+"last", last, 0)
			return p.Set(ctx, base+"available", avail, 0).Err()
		})
		return err == nil, err
	}
	v := fmt.Sprintf(`{"state":{"Last":%d,"Available":%d},"version":1}`, last, avail)
	return true, rdb.Set(ctx, key, v, 0).Err()
}
