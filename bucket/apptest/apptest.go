package apptest

import (
	"context"
	"fmt"
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
}
