-- The least a decision on the native record (scripts/doc.go) costs the server, for the
-- servercost benchmark only: GET, TIME, refill, take, SETRANGE in place, reply, as
-- token_bucket.lua's common path does, with no check at all.
-- KEYS[1] the bucket (written first by the real script); ARGV[1] capacity, ARGV[2] rate.
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
