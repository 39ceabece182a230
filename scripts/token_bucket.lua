-- bucketctl native token bucket: one atomic decision per call.
--
-- KEYS[1]  bucket key (a hash: tokens, ts, capacity, rate, allowed, denied)
-- ARGV[1]  capacity in tokens, or "" to use the capacity stored in the bucket
-- ARGV[2]  refill rate in tokens per second, or "" to use the stored rate
-- ARGV[3]  cost in tokens (>= 0)
-- ARGV[4]  optional: now in microseconds (client clock); absent or "" = Redis TIME
-- ARGV[5]  optional: "peek" to only compute the decision (run it with EVALSHA_RO);
--          absent, "" or "take" to apply it
-- ARGV[6]  optional: extra TTL in milliseconds kept after the bucket is full (default 60000)
--
-- Reply: { allowed (0|1), remaining tokens (string), retry_after_us (integer, -1 = never),
--          reset_after_us (integer) } followed by capacity and rate (strings) when either
--          came from the bucket rather than from ARGV.
-- Non-integers travel as strings: Redis truncates Lua numbers to integers.
-- Invalid arguments give an error reply and write nothing.

local key = KEYS[1]
local st = redis.call('HMGET', key, 'tokens', 'ts', 'capacity', 'rate', 'allowed', 'denied')
-- Never write into a hash that is not ours: another application's bucket (no capacity
-- field) or any other hash (no tokens field) is refused untouched.
if st[1] and not st[3] then
  return redis.error_reply('ERR bucketctl: not a native bucket (no capacity field): another layout, use inspect/reset with --layout')
end
-- Nor into a hash that holds our fields and others besides: application data.
if st[1] then
  local n = 0
  for i = 1, 6 do
    if st[i] then
      if not tonumber(st[i]) then
        return redis.error_reply('ERR bucketctl: not a native bucket (a field is not a number): left untouched')
      end
      n = n + 1
    end
  end
  if redis.call('HLEN', key) ~= n then
    return redis.error_reply('ERR bucketctl: not a native bucket (the hash holds other fields too): left untouched')
  end
end
if not st[1] and redis.call('EXISTS', key) == 1 then
  return redis.error_reply('WRONGTYPE bucketctl: the key exists but is not a token bucket')
end

local cap_s, rate_s = ARGV[1], ARGV[2]
if cap_s == nil or cap_s == '' then cap_s = st[3] end
if rate_s == nil or rate_s == '' then rate_s = st[4] end
if not cap_s or not rate_s then
  if not st[1] then
    return redis.error_reply('ERR bucketctl: no capacity/rate given and no such key')
  end
  return redis.error_reply('ERR bucketctl: no capacity/rate given and none stored in the bucket')
end
local capacity, rate, cost = tonumber(cap_s), tonumber(rate_s), tonumber(ARGV[3])
-- (No local functions: a closure is created on every call; the checks are written out.)
local huge, ceil = math.huge, math.ceil
if not capacity or capacity ~= capacity or capacity >= huge or capacity <= 0 then
  return redis.error_reply('ERR bucketctl: capacity must be a positive finite number')
end
if not rate or rate ~= rate or rate >= huge or rate <= 0 then
  return redis.error_reply('ERR bucketctl: rate must be a positive finite number')
end
-- A bucket must refill within 100 years, so its TTL (PEXPIRE, milliseconds) stays finite.
if capacity / rate > 3153600000 then
  return redis.error_reply('ERR bucketctl: capacity/rate must refill within 100 years')
end
if not cost or cost ~= cost or cost >= huge or cost < 0 then
  return redis.error_reply('ERR bucketctl: cost must be a finite number >= 0')
end

local now
if ARGV[4] ~= nil and ARGV[4] ~= '' then
  now = tonumber(ARGV[4])
  if not now or now ~= now or now >= huge or now <= -huge then
    return redis.error_reply('ERR bucketctl: now must be microseconds')
  end
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local tokens, ts = tonumber(st[1]), tonumber(st[2])
if tokens == nil or ts == nil then
  tokens, ts = capacity, now
end
-- Time never runs backwards: a late caller with an older clock refills nothing.
if now > ts then
  tokens = math.min(capacity, tokens + ((now - ts) / 1000000) * rate)
  ts = now
else
  tokens = math.min(capacity, tokens)
end

-- The reply: allowed, tokens left, retry-after (until cost tokens are there; -1 never),
-- reset-after (until full), then the spec when it came from the bucket.
local r = { 0, 0, 0, 0 }
if ARGV[1] == '' or ARGV[2] == '' then r[5] = cap_s; r[6] = rate_s end

-- A cost above capacity can never succeed: deny without touching the bucket.
if cost > capacity then
  r[2], r[3], r[4] = string.format('%.17g', tokens), -1, ceil(((capacity - tokens) / rate) * 1000000)
  return r
end

local allowed, tok_s = 0, nil
if ARGV[5] == 'peek' then
  if tokens >= cost then allowed = 1 end
else
  -- tokens is formatted once with %.17g (full precision) for HSET and the reply; ts and the
  -- counter go as Lua numbers, which Redis writes with %.17g too.
  -- tokens and ts are written back on deny too, so ts never goes stale; the spec only when
  -- it is new or changed. The TTL is at least the time until full (expiry of a full bucket
  -- is lossless: a missing bucket starts full) plus a grace that keeps the counters readable.
  local spec_changed = st[3] ~= cap_s or st[4] ~= rate_s
  local counter, count = 'denied', (tonumber(st[6]) or 0) + 1
  if tokens >= cost then
    tokens = tokens - cost
    allowed, counter, count = 1, 'allowed', (tonumber(st[5]) or 0) + 1
  end
  tok_s = string.format('%.17g', tokens)
  if spec_changed then
    redis.call('HSET', key, 'tokens', tok_s, 'ts', ts, counter, count, 'capacity', cap_s, 'rate', rate_s)
  else
    redis.call('HSET', key, 'tokens', tok_s, 'ts', ts, counter, count)
  end
  -- A deny only refills, which shortens the time to full: the TTL set before still covers it.
  if allowed == 1 or spec_changed then
    redis.call('PEXPIRE', key, ceil(((capacity - tokens) / rate) * 1000) + (tonumber(ARGV[6]) or 60000))
  end
end

r[1], r[2], r[4] = allowed, tok_s or string.format('%.17g', tokens), ceil(((capacity - tokens) / rate) * 1000000)
if tokens < cost then r[3] = ceil(((cost - tokens) / rate) * 1000000) end
return r
