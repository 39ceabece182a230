-- KEYS[1]: bucket key, e.g. "rl:user:42:global"
-- ARGV[1]: rate_per_second (float)
-- ARGV[2]: burst_capacity (int)
-- ARGV[3]: current unix timestamp as float (seconds)
-- ARGV[4]: tokens to consume (usually 1)
-- Returns: {allowed (0/1), remaining_tokens (float), retry_after_ms (int)}

local key          = KEYS[1]
local rate         = tonumber(ARGV[1])
local burst        = tonumber(ARGV[2])
local now          = tonumber(ARGV[3])
local consume      = tonumber(ARGV[4])

local data = redis.call('HMGET', key, 'tokens', 'last_refill_at')
local tokens        = tonumber(data[1])
local last_refill   = tonumber(data[2])

if tokens == nil then
    -- First request: initialize bucket full
    tokens      = burst
    last_refill = now
end

-- Refill tokens based on elapsed time
local elapsed = math.max(0, now - last_refill)
tokens = math.min(burst, tokens + elapsed * rate)

local allowed = 0
local retry_after_ms = 0

if tokens >= consume then
    tokens  = tokens - consume
    allowed = 1
else
    -- Compute how long until 1 token is available
    local deficit = consume - tokens
    retry_after_ms = math.ceil((deficit / rate) * 1000)
end

-- TTL: bucket expires after burst/rate seconds of inactivity (2x for safety)
local ttl = math.ceil(burst / rate * 2)

redis.call('HMSET', key,
    'tokens',        tokens,
    'last_refill_at', now)
redis.call('EXPIRE', key, ttl)

return {allowed, tokens * 1000, retry_after_ms}
-- Note: tokens returned as integer (x1000) to avoid Lua float precision issues
