-- The least one decision on bucketctl's native layout (one string: a tag, then tokens, ts,
-- capacity, rate, allowed, denied packed as doubles) can cost the server, for comparison
-- only: it reads the bucket (GET), reads TIME, refills, takes and writes the whole value
-- back with its TTL (SET PX), as token_bucket.lua does on its common path, and checks
-- nothing: no tag, no ranges, no argument grammar. Never used to decide anything; the
-- servercost benchmark runs it beside the real script to show what the layout alone costs.
--
-- KEYS[1] the bucket; ARGV[1] capacity, ARGV[2] rate (tokens a second), ARGV[3] cost.
local key = KEYS[1]
local cap, rate, cost = ARGV[1] + 0, ARGV[2] + 0, ARGV[3] + 0
local v = redis.call('GET', key)
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local tokens, ts, n_allowed, n_denied = cap, now, 0, 0
local c_, r_
if v then tokens, ts, c_, r_, n_allowed, n_denied = struct.unpack('<dddddd', v, 14) end
if now > ts then tokens = tokens + (now - ts) / 1000000 * rate end
if tokens > cap then tokens = cap end
local allowed = 0
if tokens >= cost then
  tokens, allowed, n_allowed = tokens - cost, 1, n_allowed + 1
else
  n_denied = n_denied + 1
end
redis.call('SET', key, 'bucketctl:v1:' .. struct.pack('<dddddd', tokens, now, cap, rate, n_allowed, n_denied),
  'PX', math.ceil((cap - tokens) / rate * 1000) + 60000)
return { allowed, string.format('%.17g', tokens), 0, 0 }
