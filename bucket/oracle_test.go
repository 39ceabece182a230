package bucket_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/scripts"
)

// oracle runs one application's own algorithm: its script as published (scripts/third_party/apps/*.lua,
// verbatim; the native one is scripts/token_bucket.lua), called the way the application
// calls it, with a chosen time for the applications that pass their own clock.
type oracle struct {
	layout bucket.Layout
	script *redis.Script
	// serverClock: the script reads Redis TIME (Spring); the now passed to run is ignored.
	serverClock bool
	// fixedCost: the application always takes 1 (Webman).
	fixedCost bool
	// writesDenied: a deny below -1 after the cost is written too, as level - cost (Upstash).
	writesDenied bool
	// args are the script's KEYS and ARGV for a request of cost at the app's clock now (µs).
	args func(key string, sp bucket.Spec, now int64, cost float64) ([]string, []any)
	// reply reads allowed and the retry-after the application reports (reports=false when
	// it reports none).
	reply func(v any) (allowed bool, retry time.Duration, reports bool)
	// replyAt is reply for an application whose decision depends on the spec (Traefik's max
	// delay); it is used where set.
	replyAt func(v any, sp bucket.Spec) (allowed bool, retry time.Duration, reports bool)
	// key names the bucket called name as the application does (nil: name itself).
	key func(name string) string
	// writesNothing says the application writes nothing for a spec (Spring Cloud Gateway
	// when floor(2·capacity/rate) is 0): the level it saw is unknown then.
	writesNothing func(sp bucket.Spec) bool
}

// bucket is the application's bucket called name (see key).
func (o oracle) bucket(name string) string {
	if o.key == nil {
		return name
	}
	return o.key(name)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// secs6 is a time as a client passes float seconds: six decimals (microseconds).
func secs6(us int64) string { return strconv.FormatFloat(float64(us)/1e6, 'f', 6, 64) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func loadOracle(t testing.TB, name string) *redis.Script {
	t.Helper()
	src := scripts.App(name)
	if src == "" {
		t.Fatalf("no script for application %s in scripts/third_party/apps", name)
	}
	return redis.NewScript(src)
}

func arr(v any) []any { a, _ := v.([]any); return a }

func oracles(t testing.TB) map[string]oracle {
	p := bucket.Presets
	// The native reply is the decision's record, read with the spec and cost it was asked with.
	var nativeSpec bucket.Spec
	var nativeCost float64
	return map[string]oracle{
		"native": {layout: p["native"], script: redis.NewScript(scripts.TokenBucket()),
			args: func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				// Its check: the same decision, not taken, and the level it saw in the reply.
				nativeSpec, nativeCost = sp, cost
				return []string{k}, []any{num(sp.Capacity), num(sp.Rate), num(cost), strconv.FormatInt(now, 10), "peek"}
			},
			reply: func(v any) (bool, time.Duration, bool) {
				r, err := bucket.NativeReply(v, nativeSpec, nativeCost)
				if err != nil {
					t.Fatal(err)
				}
				return r.Allowed, r.RetryAfter, true
			}},
		"webman": {layout: p["webman"], script: loadOracle(t, "webman"), fixedCost: true,
			args: func(k string, sp bucket.Spec, now int64, _ float64) ([]string, []any) {
				return []string{k, k + ":last_time"}, []any{num(sp.Capacity), num(sp.Rate), secs6(now)}
			},
			reply: func(v any) (bool, time.Duration, bool) { return v == int64(1), 0, false }},
		"go-bench": {layout: p["go-bench"], script: loadOracle(t, "go-bench"),
			args: func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				return []string{k}, []any{floorDiv(now, 1000), num(sp.Rate), num(sp.Capacity), num(cost), 600000}
			},
			reply: func(v any) (bool, time.Duration, bool) {
				a := arr(v)
				return a[0].(int64) == 1, time.Duration(a[1].(int64)) * time.Millisecond, true
			}},
		"spring": {layout: p["spring"], script: loadOracle(t, "spring"), serverClock: true,
			args: func(k string, sp bucket.Spec, _ int64, cost float64) ([]string, []any) {
				return []string{k}, []any{num(sp.Capacity), num(sp.Rate), num(cost)}
			},
			reply: func(v any) (bool, time.Duration, bool) { return v == int64(1), 0, false }},
		"multi-tier": {layout: p["multi-tier"], script: loadOracle(t, "multi-tier"),
			args: func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				return []string{k}, []any{num(sp.Rate), num(sp.Capacity), secs6(now), num(cost)}
			},
			reply: func(v any) (bool, time.Duration, bool) {
				a := arr(v)
				return a[0].(int64) == 1, time.Duration(a[2].(int64)) * time.Millisecond, true
			}},
		"traefik": {layout: p["traefik"], script: loadOracle(t, "traefik"), fixedCost: true,
			args: func(k string, sp bucket.Spec, now int64, _ float64) ([]string, []any) {
				return []string{k}, []any{sp.Rate / 1e6, int64(sp.Capacity), apptest.TraefikTTL(sp.Rate), now, apptest.TraefikMaxDelay(sp.Rate).Microseconds()}
			},
			replyAt: func(v any, sp bucket.Spec) (bool, time.Duration, bool) {
				delay, err := strconv.ParseFloat(arr(v)[1].(string), 64)
				if err != nil {
					panic(err)
				}
				d := time.Duration(delay * float64(time.Microsecond))
				if d <= apptest.TraefikMaxDelay(sp.Rate) {
					return true, 0, true // served, after the delay
				}
				return false, d, true
			}},
		"upstash": {layout: p["upstash"], script: loadOracle(t, "upstash"), writesDenied: true,
			args: func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				return []string{k, apptest.UpstashDynamicKey(k)}, []any{num(sp.Capacity), 1000, num(sp.Rate), floorDiv(now, 1000), num(cost)}
			},
			reply: func(v any) (bool, time.Duration, bool) { return arr(v)[0].(int64) >= 0, 0, false }},
		// A custom layout like upstash with its own interval: 10 s, refillRate = rate × 10.
		"upstash-10s": {layout: bucket.Layout{Name: "upstash-10s", Type: bucket.Hash, TokensField: "tokens", TimeField: "refilledAt",
			TimeUnit: "ms", Like: "upstash", Interval: 10 * time.Second}, script: loadOracle(t, "upstash"), writesDenied: true,
			args: func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				return []string{k, apptest.UpstashDynamicKey(k)}, []any{num(sp.Capacity), 10000, num(sp.Rate * 10), floorDiv(now, 1000), num(cost)}
			},
			reply: func(v any) (bool, time.Duration, bool) { return arr(v)[0].(int64) >= 0, 0, false }},
		"express": {layout: p["express"], script: loadOracle(t, "express"),
			args: func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				// String(Date.now() / 1000)
				return []string{k}, []any{num(sp.Capacity), num(sp.Rate), num(float64(floorDiv(now, 1000)) / 1000), num(cost)}
			},
			reply: func(v any) (bool, time.Duration, bool) {
				a := arr(v)
				return a[0].(int64) == 1, time.Duration(a[2].(int64)) * time.Second, true
			}},
		// RedisRateLimiter.java's call: ARGV[3] "" reads Redis TIME in whole seconds.
		"spring-cloud-gateway": {layout: p["spring-cloud-gateway"], script: loadOracle(t, "spring-cloud-gateway"), serverClock: true,
			key: func(name string) string { return "request_rate_limiter.{" + name + "}.tokens" },
			args: func(k string, sp bucket.Spec, _ int64, cost float64) ([]string, []any) {
				return p["spring-cloud-gateway"].Keys(k), []any{num(sp.Rate), num(sp.Capacity), "", num(cost)}
			},
			reply:         func(v any) (bool, time.Duration, bool) { return arr(v)[0].(int64) == 1, 0, false },
			writesNothing: func(sp bucket.Spec) bool { return math.Floor(sp.Capacity/sp.Rate*2) <= 0 }},
	}
}

// write stores lv as the application stores it (exists=false: no bucket). Times are
// written at the layout's own resolution: go-bench whole ms, Spring whole seconds, the
// float-seconds layouts six decimals, native µs.
func (o oracle) write(t testing.TB, c *redis.Client, key string, sp bucket.Spec, lv bucket.Level, exists bool) {
	t.Helper()
	ctx := context.Background()
	keys := o.layout.Keys(key)
	pipe := c.TxPipeline()
	pipe.Del(ctx, keys...)
	if exists {
		tok := num(lv.Tokens)
		switch o.layout.Name {
		case "webman":
			pipe.Set(ctx, keys[0], tok, 0)
			pipe.Set(ctx, keys[1], secs6(lv.TS), 0)
		case "native":
			pipe.Set(ctx, key, bucket.EncodeNative(bucket.NativeValues{Tokens: lv.Tokens, TS: float64(lv.TS),
				Capacity: sp.Capacity, Rate: sp.Rate}), 0)
		case "go-bench":
			pipe.HSet(ctx, key, "tokens", tok, "ts", floorDiv(lv.TS, 1000))
		case "spring":
			pipe.HSet(ctx, key, "tokens", tok, "last_refill_time", floorDiv(lv.TS, 1e6))
		case "spring-cloud-gateway":
			pipe.Set(ctx, keys[0], tok, 0)
			pipe.Set(ctx, keys[1], floorDiv(lv.TS, 1e6), 0)
		case "upstash", "upstash-10s":
			pipe.HSet(ctx, key, "refilledAt", floorDiv(lv.TS, 1000), "tokens", tok)
		case "traefik": // read by position: last first
			pipe.HSet(ctx, key, "last", lv.TS, "tokens", tok)
		default:
			pipe.HSet(ctx, key, "tokens", tok, o.layout.TimeField, secs6(lv.TS))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// appRun is what one call of the application did.
type appRun struct {
	allowed bool
	retry   time.Duration
	reports bool
	// level is the level the application saw before taking (known unless Webman denied:
	// it writes nothing then).
	level      float64
	levelKnown bool
}

// run calls the application once at its clock's now (µs) for a request of cost.
func (o oracle) run(t testing.TB, c *redis.Client, key string, sp bucket.Spec, now int64, cost float64) appRun {
	t.Helper()
	ctx := context.Background()
	keys, args := o.args(key, sp, now, cost)
	v, err := o.script.Run(ctx, c, keys, args...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("%s script: %v", o.layout.Name, err)
	}
	var r appRun
	if o.replyAt != nil {
		r.allowed, r.retry, r.reports = o.replyAt(v, sp)
	} else {
		r.allowed, r.retry, r.reports = o.reply(v)
	}
	var after string
	if o.layout.Native {
		n, err := bucket.NativeReply(v, sp, cost)
		if err != nil {
			t.Fatalf("native script: %v", err)
		}
		after = strconv.FormatFloat(n.Remaining, 'g', -1, 64)
		cost = 0
	} else if o.layout.Type == bucket.Strings {
		after, err = c.Get(ctx, key).Result()
	} else {
		after, err = c.HGet(ctx, key, o.layout.TokensField).Result()
	}
	// Webman writes nothing on a deny.
	if err != nil || (o.fixedCost && !r.allowed) || (o.writesNothing != nil && o.writesNothing(sp)) {
		return r
	}
	f, err := strconv.ParseFloat(after, 64)
	if err != nil {
		t.Fatalf("%s wrote tokens %q", o.layout.Name, after)
	}
	if r.allowed || (o.writesDenied && f < 0) {
		if o.fixedCost {
			cost = 1
		}
		f += cost
	}
	r.level, r.levelKnown = f, true
	return r
}
