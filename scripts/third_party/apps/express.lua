-- token_bucket.lua
-- KEYS[1] = bucket key (e.g., 'rate:user:42')
-- ARGV[1] = capacity (max tokens)
-- ARGV[2] = refill rate (tokens per second)
-- ARGV[3] = now (seconds, float)
-- ARGV[4] = cost (tokens to consume; usually 1)
-- Returns: { allowed (1/0), remaining tokens, retry_after_seconds }
local capacity = tonumber(ARGV[1])
local refill_rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local data = redis.call('HMGET', KEYS[1], 'tokens', 'last_refill')
local tokens = tonumber(data[1]) or capacity
local last_refill = tonumber(data[2]) or now
-- Refill since last update.
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
-- TTL = 2× the time to fully refill, so old buckets eventually expire.
redis.call('EXPIRE', KEYS[1], math.ceil(2 * capacity / refill_rate))
return { allowed, tokens, retry_after }
