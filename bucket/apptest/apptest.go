// Package apptest holds, for tests, the bucket algorithms of the applications whose layouts
// bucketctl reads: each application's own script, arguments and clock, so tests write and
// decide buckets exactly as those applications do.
package apptest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
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

// Apps are the five applications of the layouts bucketctl knows besides its own.
var Apps = []App{
	{Layout: "webman", ClientClock: true, Script: redis.NewScript(`
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
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k, k + ":last_time"}, []any{c, r, secs(now)}
		}},
	{Layout: "go-bench", ClientClock: true, Script: redis.NewScript(`
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
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{now.UnixMilli(), r, c, 1, 600000}
		}},
	{Layout: "spring", Script: redis.NewScript(`
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
		args: func(k string, c, r float64, _ time.Time) ([]string, []any) {
			return []string{k}, []any{c, r, 1}
		}},
	{Layout: "multi-tier", ClientClock: true, Script: redis.NewScript(`
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
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{r, c, secs(now), 1}
		}},
	{Layout: "express", ClientClock: true, Script: redis.NewScript(`
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
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{c, r, secs(now), 1}
		}},
}
