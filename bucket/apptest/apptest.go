package apptest

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// App stores buckets exactly as one application does: its own Lua script, its own
// arguments and clock. Decide takes one token (the apps all take 1) and reports allowed.
type App struct {
	// Layout is the bucketctl preset that reads this application's buckets.
	Layout string
	Script *redis.Script
	// args builds the application's KEYS and ARGV for capacity, rate and its clock's now.
	args func(key string, capacity, rate float64, now time.Time) ([]string, []any)
	// ClientClock says the application passes its own time (else it uses Redis TIME).
	ClientClock bool
	// served reads the decision from a reply that is not 1/0 or {1, ...} (Traefik's).
	served func(reply any, rate float64) (bool, error)
	// key names the bucket called name as the application does (nil: name itself).
	key func(name string) string
}

// Key is the application's bucket for name: the key a rule matches and bucketctl reads
// (Spring Cloud Gateway: request_rate_limiter.{name}.tokens).
func (w App) Key(name string) string {
	if w.key == nil {
		return name
	}
	return w.key(name)
}

// Decide runs one decision of the application on key (cost 1) with its clock at now.
func (w App) Decide(ctx context.Context, c redis.Scripter, key string, capacity, rate float64, now time.Time) (bool, error) {
	keys, args := w.args(key, capacity, rate, now)
	v, err := w.Script.Run(ctx, c, keys, args...).Result()
	if err != nil && err != redis.Nil {
		return false, fmt.Errorf("%s app script: %w", w.Layout, err)
	}
	if w.served != nil {
		return w.served(v, rate)
	}
	switch r := v.(type) {
	case int64:
		return r == 1, nil
	case []any:
		return r[0].(int64) == 1, nil
	case nil:
		return false, nil // Spring's script returns false (nil) on deny
	}
	return false, fmt.Errorf("%s app script replied %T %v", w.Layout, v, v)
}

func secs(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', 6, 64) }

// Apps are the applications of the layouts bucketctl knows besides its own and the GCRA
// libraries'.
var Apps = []App{
	{Layout: "webman", ClientClock: true, Script: redis.NewScript(scripts.App("webman")),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k, k + ":last_time"}, []any{c, r, secs(now)}
		}},
	{Layout: "go-bench", ClientClock: true, Script: redis.NewScript(scripts.App("go-bench")),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{now.UnixMilli(), r, c, 1, 600000}
		}},
	{Layout: "spring", Script: redis.NewScript(scripts.App("spring")),
		args: func(k string, c, r float64, _ time.Time) ([]string, []any) {
			return []string{k}, []any{c, r, 1}
		}},
	{Layout: "multi-tier", ClientClock: true, Script: redis.NewScript(scripts.App("multi-tier")),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{r, c, secs(now), 1}
		}},
	{Layout: "traefik", ClientClock: true, Script: redis.NewScript(scripts.App("traefik")), served: traefikServed,
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{r / 1e6, int64(c), TraefikTTL(r), now.UnixMicro(), TraefikMaxDelay(r).Microseconds()}
		}},
	{Layout: "upstash", ClientClock: true, Script: redis.NewScript(scripts.App("upstash")), served: upstashServed,
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k, UpstashDynamicKey(k)}, []any{c, 1000, r, now.UnixMilli(), 1}
		}},
	{Layout: "express", ClientClock: true, Script: redis.NewScript(scripts.App("express")),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{c, r, secs(now), 1}
		}},
	// RedisRateLimiter.java: the tokens and timestamp keys of one id; replenishRate,
	// burstCapacity, "" (Redis TIME), requestedTokens; the reply {allowed, tokens left}.
	{Layout: "spring-cloud-gateway", Script: redis.NewScript(scripts.App("spring-cloud-gateway")),
		key: func(name string) string { return "request_rate_limiter.{" + name + "}.tokens" },
		args: func(k string, c, r float64, _ time.Time) ([]string, []any) {
			return []string{k, strings.TrimSuffix(k, ".tokens") + ".timestamp"}, []any{r, c, "", 1}
		}},
	// store.go Take: the key as given; time.Now().UnixNano(), Tokens, Interval in ns (Tokens
	// per Interval: capacity, capacity / rate); the reply {max, tokens, next, ok}.
	{Layout: "go-redisstore", ClientClock: true, Script: redis.NewScript(scripts.App("go-redisstore")), served: goRedisStoreServed,
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{now.UnixNano(), uint64(c), GoRedisStoreInterval(c, r).Nanoseconds()}
		}},
}

// GoRedisStoreInterval is the Interval of a go-redisstore Store of capacity Tokens at rate.
func GoRedisStoreInterval(capacity, rate float64) time.Duration {
	return time.Duration(math.Round(capacity / rate * 1e9))
}

// goRedisStoreServed: ok, the fourth of {max, tokens, next, ok} (true 1, false nil).
func goRedisStoreServed(v any, _ float64) (bool, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 3 {
		return false, fmt.Errorf("go-redisstore app script replied %T %v", v, v)
	}
	return len(a) == 4 && a[3] == int64(1), nil
}

// TraefikMaxDelay and TraefikTTL are Traefik's (pkg/middlewares/ratelimiter/rate_limiter.go)
// for a rate in requests per second.
func TraefikMaxDelay(rate float64) time.Duration {
	if rate < 1 {
		return 500 * time.Millisecond
	}
	return time.Second / (time.Duration(rate) * 2)
}

// TraefikTTL is the key's TTL in seconds, set by every call.
func TraefikTTL(rate float64) int {
	ttl := 1
	if rate >= 1 {
		ttl++
	} else if rate > 0 {
		ttl += int(1 / rate)
	}
	return ttl
}

// traefikServed is the middleware's decision: {"true", delay µs, tokens}, served (after the
// delay) unless the delay exceeds the max delay.
func traefikServed(v any, rate float64) (bool, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 3 {
		return false, fmt.Errorf("traefik app script replied %T %v", v, v)
	}
	delay, err := strconv.ParseFloat(fmt.Sprint(a[1]), 64)
	if err != nil {
		return false, fmt.Errorf("traefik app script replied delay %v: %w", a[1], err)
	}
	return time.Duration(delay*float64(time.Microsecond)) <= TraefikMaxDelay(rate), nil
}

// UpstashDynamicKey is the dynamic-limit key passed with key (a missing one: the limit is the
// argument's), in key's slot so that a Cluster takes both, where Upstash's default passes "".
func UpstashDynamicKey(key string) string {
	if strings.ContainsAny(key, "{}") {
		return key + ":dynamic:global"
	}
	return "{" + key + "}:dynamic:global"
}

// upstashServed: success = remaining >= 0, the first of {remaining, reset, limit}.
func upstashServed(v any, _ float64) (bool, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 3 {
		return false, fmt.Errorf("upstash app script replied %T %v", v, v)
	}
	n, ok := a[0].(int64)
	return ok && n >= 0, nil
}
