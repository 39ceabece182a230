// Package demo is the traffic of bucketctl's demo: bucketctl's own buckets, and buckets of
// every other application layout bucketctl reads, each driven by that application's own
// limiter (its Lua script as its article gives it, its clock, its TTL), so every row of
// the demo moves as it would in production.
package demo

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// App decides one request the way an application does, in its own layout.
type App struct {
	// Layout is the preset the application's buckets read as.
	Layout string
	script *redis.Script
	keys   func(key string) []string
	args   func(spec bucket.Spec, now time.Time) []any
	// allowed reads the script's reply.
	allowed func(reply any) bool
}

// Take decides one request of cost 1 against key, as the application would.
func (a *App) Take(ctx context.Context, rdb redis.Scripter, key string, spec bucket.Spec, now time.Time) (bool, error) {
	v, err := a.script.Run(ctx, rdb, a.keys(key), a.args(spec, now)...).Result()
	if errors.Is(err, redis.Nil) { // a Lua false: Spring's script returns its boolean
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return a.allowed(v), nil
}

func secondsF(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', 6, 64)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func one(key string) []string { return []string{key} }

func firstIsOne(v any) bool {
	if a, ok := v.([]any); ok && len(a) > 0 {
		v = a[0]
	}
	n, _ := v.(int64)
	return n == 1
}

// Apps are the applications of the layouts bucketctl knows, by layout name.
var Apps = map[string]*App{
	// Webman (PHP): two strings, client time (microtime(true)), no TTL; a denial writes
	// nothing.
	"webman": {Layout: "webman", script: redis.NewScript(`
local key = KEYS[1]
local lastTimeKey = KEYS[2]
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = 1
local currentTokens = tonumber(redis.call('GET', key))
if currentTokens == nil then currentTokens = capacity end
local lastRefillTime = tonumber(redis.call('GET', lastTimeKey))
if lastRefillTime == nil then lastRefillTime = now end
local timePassed = now - lastRefillTime
local tokensToAdd = timePassed * rate
local newTokenCount = math.min(capacity, currentTokens + tokensToAdd)
if newTokenCount < requested then return 0 end
newTokenCount = newTokenCount - requested
redis.call('SET', key, newTokenCount)
redis.call('SET', lastTimeKey, now)
return 1`),
		keys: func(k string) []string { return []string{k, k + ":last_time"} },
		args: func(s bucket.Spec, now time.Time) []any {
			return []any{num(s.Capacity), num(s.Rate), secondsF(now)}
		},
		allowed: firstIsOne},

	// The Go benchmark: hash tokens/ts, client time in ms, ts = max(now, ts), always
	// writes back, PEXPIRE from the caller.
	"go-bench": {Layout: "go-bench", script: redis.NewScript(`
local key = KEYS[1]
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local tokens = redis.call("HGET", key, "tokens")
local ts = redis.call("HGET", key, "ts")
if tokens == false or ts == false then
tokens = burst
ts = now
else
tokens = tonumber(tokens)
ts = tonumber(ts)
end
local delta = math.max(0, now - ts)
local refill = (delta / 1000.0) * rate
tokens = math.min(burst, tokens + refill)
ts = math.max(now, ts)
local allowed = 0
local retry_after_ms = 0
if tokens >= cost then
tokens = tokens - cost
allowed = 1
else
local need = cost - tokens
retry_after_ms = math.ceil((need / rate) * 1000.0)
end
redis.call("HSET", key, "tokens", tokens)
redis.call("HSET", key, "ts", ts)
if ttl ~= nil and ttl > 0 then
redis.call("PEXPIRE", key, ttl)
end
return {allowed, retry_after_ms}`),
		keys: one,
		args: func(s bucket.Spec, now time.Time) []any {
			return []any{now.UnixMilli(), num(s.Rate), num(s.Capacity), 1, 60_000}
		},
		allowed: firstIsOne},

	// Spring Boot: hash tokens/last_refill_time, Redis TIME in whole seconds, EXPIRE
	// ceil(cap/rate)+60; returns its boolean.
	"spring": {Layout: "spring", script: redis.NewScript(`
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local time_info = redis.call('TIME')
local now = tonumber(time_info[1])
local info = redis.call('HMGET', key, 'tokens', 'last_refill_time')
local current_tokens = tonumber(info[1])
local last_refill_time = tonumber(info[2])
if current_tokens == nil then
current_tokens = capacity
last_refill_time = now
end
if now > last_refill_time then
local delta = now - last_refill_time
local filled = delta * rate
current_tokens = math.min(capacity, current_tokens + filled)
last_refill_time = now
end
local allowed = false
if current_tokens >= requested then
current_tokens = current_tokens - requested
allowed = true
end
redis.call('HMSET', key, 'tokens', current_tokens, 'last_refill_time', last_refill_time)
redis.call('EXPIRE', key, math.ceil(capacity/rate) + 60)
return allowed`),
		keys: one,
		args: func(s bucket.Spec, _ time.Time) []any {
			return []any{num(s.Capacity), num(s.Rate), 1}
		},
		allowed: firstIsOne},

	// The multi-tier design (Python): hash tokens/last_refill_at, client time in float
	// seconds, EXPIRE ceil(2·burst/rate).
	"multi-tier": {Layout: "multi-tier", script: redis.NewScript(`
local key          = KEYS[1]
local rate         = tonumber(ARGV[1])
local burst        = tonumber(ARGV[2])
local now          = tonumber(ARGV[3])
local consume      = tonumber(ARGV[4])
local data = redis.call('HMGET', key, 'tokens', 'last_refill_at')
local tokens        = tonumber(data[1])
local last_refill   = tonumber(data[2])
if tokens == nil then
    tokens      = burst
    last_refill = now
end
local elapsed = math.max(0, now - last_refill)
tokens = math.min(burst, tokens + elapsed * rate)
local allowed = 0
local retry_after_ms = 0
if tokens >= consume then
    tokens  = tokens - consume
    allowed = 1
else
    local deficit = consume - tokens
    retry_after_ms = math.ceil((deficit / rate) * 1000)
end
local ttl = math.ceil(burst / rate * 2)
redis.call('HMSET', key,
    'tokens',        tokens,
    'last_refill_at', now)
redis.call('EXPIRE', key, ttl)
return {allowed, tokens * 1000, retry_after_ms}`),
		keys: one,
		args: func(s bucket.Spec, now time.Time) []any {
			return []any{num(s.Rate), num(s.Capacity), secondsF(now), 1}
		},
		allowed: firstIsOne},

	// Express (Node): hash tokens/last_refill, client time in float seconds
	// (Date.now()/1000), EXPIRE ceil(2·cap/rate).
	"express": {Layout: "express", script: redis.NewScript(`
local capacity = tonumber(ARGV[1])
local refill_rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local data = redis.call('HMGET', KEYS[1], 'tokens', 'last_refill')
local tokens = tonumber(data[1]) or capacity
local last_refill = tonumber(data[2]) or now
local elapsed = math.max(0, now - last_refill)
tokens = math.min(capacity, tokens + elapsed * refill_rate)
local allowed = 0
local retry_after = 0
if tokens >= cost then
tokens = tokens - cost
allowed = 1
else
retry_after = (cost - tokens) / refill_rate
end
redis.call('HMSET', KEYS[1], 'tokens', tokens, 'last_refill', now)
redis.call('EXPIRE', KEYS[1], math.ceil(2 * capacity / refill_rate))
return { allowed, tokens, retry_after }`),
		keys: one,
		args: func(s bucket.Spec, now time.Time) []any {
			return []any{num(s.Capacity), num(s.Rate), strconv.FormatFloat(float64(now.UnixMilli())/1000, 'f', 3, 64), 1}
		},
		allowed: firstIsOne},
}
