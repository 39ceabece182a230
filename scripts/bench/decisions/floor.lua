-- The least one decision on bucketctl's native layout (one string: a tag, then the last
-- outcome, tokens, ts, the allowed and denied counters, capacity, rate and expires, packed
-- with struct) can cost the server, for comparison only: it reads the bucket (GET), reads
-- TIME, refills, takes and writes the record back in place (SETRANGE, keeping the TTL) and
-- replies with it, as token_bucket.lua does on its common path, and checks nothing: no
-- tag, no ranges, no spec, no TTL. Never used to decide anything; the servercost
-- benchmark runs it beside the real script to show what the layout alone costs.
--
-- KEYS[1] the bucket; ARGV[1] capacity, ARGV[2] rate (tokens a second). The bucket must
-- exist (the benchmark's warm-up writes it with the real script).
local key = KEYS[1]
local cap, rate = ARGV[1] + 0, ARGV[2] + 0
local v = redis.call('GET', key)
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local _, tokens, ts, n_allowed, n_denied = struct.unpack('<c13xddI7I7', v)
if now > ts then tokens = tokens + (now - ts) / 1000000 * rate end
if tokens > cap then tokens = cap end
local allowed = 0
if tokens >= 1 then
  tokens, allowed, n_allowed = tokens - 1, 1, n_allowed + 1
else
  n_denied = n_denied + 1
end
local r = struct.pack('<BddI7I7', allowed, tokens, now, n_allowed, n_denied)
redis.call('SETRANGE', key, '13', r)
return r
