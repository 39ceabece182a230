-- The least one decision on bucketctl's native layout (a hash: tokens, ts, a counter,
-- capacity, rate) can cost the server, for comparison only: it reads the bucket whole
-- (HGETALL), reads TIME, refills, takes and writes the level, the time and a counter back
-- (HSET), as token_bucket.lua does on its common path, and checks nothing: no identity, no
-- number grammar, no ranges, no TTL. Never used to decide anything; the servercost
-- benchmark runs it beside the real script to show what the layout alone costs.
--
-- KEYS[1] the bucket; ARGV[1] capacity, ARGV[2] rate (tokens a second), ARGV[3] cost.
local key = KEYS[1]
local cap, rate, cost = ARGV[1] + 0, ARGV[2] + 0, ARGV[3] + 0
local h = redis.call('HGETALL', key)
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local tokens, ts, n_allowed, n_denied = cap, now, 0, 0
if h[1] then tokens, ts, n_allowed, n_denied = h[2] + 0, h[4] + 0, (h[6] or 0) + 0, (h[12] or 0) + 0 end
if now > ts then tokens = tokens + (now - ts) / 1000000 * rate end
if tokens > cap then tokens = cap end
local allowed, counter, count = 0, 'denied', n_denied + 1
if tokens >= cost then
  tokens, allowed, counter, count = tokens - cost, 1, 'allowed', n_allowed + 1
end
local s = string.format('%.17g', tokens)
if h[1] then
  redis.call('HSET', key, 'tokens', s, 'ts', now, counter, count)
else
  redis.call('HSET', key, 'tokens', s, 'ts', now, counter, count, 'capacity', ARGV[1], 'rate', ARGV[2])
end
return { allowed, s, 0, 0 }
