-- bucketctl multi-tier token bucket: one all-or-nothing decision over several buckets
-- (say a user's bucket, an endpoint bucket and an overall bucket), in one atomic call.
--
-- KEYS[1..n]  the tiers' bucket keys: native buckets, exactly as token_bucket.lua writes them
--             (a tagged string; a native-hash bucket is read and converted by the write).
--             In a Redis Cluster every key of one call must hash to the same slot: give them
--             one hash tag, e.g. rl:{user42}:user, rl:{user42}:endpoint:/search, rl:{user42}:global.
-- ARGV[1]     now in microseconds (client clock); "" = Redis TIME
-- ARGV[2]     extra TTL in milliseconds kept after a bucket is full; "" = 60000
-- ARGV[3i], ARGV[3i+1], ARGV[3i+2]  for tier i = 1..n: capacity ("" = stored), rate ("" = stored),
--             cost (>= 0)
--
-- The decision, per tier with the refill math of token_bucket.lua:
--   1. every bucket is refilled to now (ts = max(now, ts); a lowered capacity clamps);
--   2. the request is allowed only when every tier holds its cost;
--   3. allowed: the cost is taken from every tier and `allowed` is counted on every tier;
--      denied: nothing is taken from any tier, `denied` is counted only on the tiers that lacked
--      their cost, and every tier is still written back at its refilled level with the new ts
--      (as token_bucket.lua does on deny, so ts never goes stale).
-- A tier whose cost exceeds its capacity can never succeed: the decision is denied and nothing
-- is written anywhere, as token_bucket.lua leaves such a bucket untouched.
--
-- Reply: { denied: 0 when allowed, else the index (1-based) of the first tier that lacked its
--          cost, then six values per tier: had_cost (0|1), remaining tokens (string),
--          retry_after_us (integer, -1 = never), reset_after_us (integer), capacity (string),
--          rate (string) }
-- Remaining is after the decision: cost taken when allowed, the refilled level when denied.
-- Non-integers travel as strings: Redis truncates Lua numbers to integers.
-- Invalid arguments give an error reply naming the tier, and write nothing.
--
-- The identity check, the number grammar and the TTL rule are the shared prelude's
-- (number.lua); the refill, waits and writes are token_bucket.lua's, and both are tested
-- against the same Go model.

local num, native, refusal, tagged, ttl_ms, checked, clock, struct =
  prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S)
local n = #KEYS
if n == 0 or #ARGV ~= 2 + 3 * n then
  return redis.error_reply('ERR bucketctl: want 2 + 3 arguments per key, got ' .. #ARGV .. ' for ' .. n .. ' keys')
end
local now, grace = clock(ARGV[1], ARGV[2])
if now == false then return redis.error_reply(grace) end
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Read and validate every tier before writing anything.
local tiers, seen = {}, {}
for i = 1, n do
  local key = KEYS[i]
  local sfx = ' (tier ' .. i .. ')'
  if seen[key] then return redis.error_reply('ERR bucketctl: duplicate key' .. sfx) end
  seen[key] = true
  -- Identity (the prelude's tagged(), or native() for a native-hash bucket): only a native
  -- bucket, each value in range, is ever written.
  local v = redis.pcall('GET', key)
  local s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied, st_cap, st_rate
  if v then
    if type(v) == 'string' then
      s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = tagged(v)
    elseif redis.call('TYPE', key)['ok'] == 'hash' then
      s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = native(redis.call('HGETALL', key))
    else
      return redis.error_reply('WRONGTYPE bucketctl: key holds another Redis type' .. sfx)
    end
    if s_tokens == nil then -- refused: s_ts is the kind of refusal, s_cap why
      return redis.error_reply(refusal(s_ts, s_cap) .. sfx)
    end
    st_cap, st_rate = string.format('%.17g', s_cap), string.format('%.17g', s_rate)
  end
  local a = 3 * i
  local cap_s, rate_s = ARGV[a], ARGV[a + 1]
  if cap_s == '' then cap_s = st_cap end
  if rate_s == '' then rate_s = st_rate end
  if not cap_s or not rate_s then
    return redis.error_reply('ERR bucketctl: no capacity/rate given and none stored in the bucket' .. sfx)
  end
  local capacity, rate, cost = checked(cap_s, rate_s, ARGV[a + 2])
  if capacity == false then return redis.error_reply(rate .. sfx) end

  local tokens, ts = s_tokens, s_ts
  if tokens == nil then
    tokens, ts = capacity, now
  end
  -- Time never runs backwards: a late caller with an older clock refills nothing.
  if now > ts then
    tokens = math.min(capacity, tokens + ((now - ts) / 1000000) * rate)
    ts = now
  else
    tokens = math.min(capacity, tokens)
  end
  tiers[i] = { key = key, cap_s = cap_s, rate_s = rate_s, capacity = capacity, rate = rate,
               cost = cost, tokens = tokens, ts = ts,
               n_allowed = s_allowed or 0, n_denied = s_denied or 0 }
end

local function wait_for(t)
  if t.cost > t.capacity then return -1 end
  if t.tokens >= t.cost then return 0 end
  return math.ceil(((t.cost - t.tokens) / t.rate) * 1000000)
end
local function reset_after(t)
  return math.ceil(((t.capacity - t.tokens) / t.rate) * 1000000)
end

local denied, impossible = 0, false
for i = 1, n do
  local t = tiers[i]
  t.ok = t.tokens >= t.cost and t.cost <= t.capacity
  if t.cost > t.capacity then impossible = true end
  if not t.ok and denied == 0 then denied = i end
end

-- Every tier is written back, at its refilled level and new ts, on deny too (as
-- token_bucket.lua does, so ts never goes stale), with its spec in use and counters (a
-- counter moves when the tier is allowed, or lacked its cost on a deny), value and TTL in
-- one SET PX (the prelude's ttl_ms); a native-hash tier is converted so.
if not impossible then
  for i = 1, n do
    local t = tiers[i]
    if denied == 0 then
      t.tokens, t.n_allowed = t.tokens - t.cost, t.n_allowed + 1
    elseif not t.ok then
      t.n_denied = t.n_denied + 1
    end
    local last = 0
    if denied == 0 then last = 1 end
    redis.call('SET', t.key, struct.pack('<c13BddI7I7ddI4', TAG, last, t.tokens, t.ts, t.n_allowed, t.n_denied,
      t.capacity, t.rate, 0), 'PX', ttl_ms(t.capacity, t.tokens, t.rate, grace))
  end
end

local r = { denied }
for i = 1, n do
  local t = tiers[i]
  local ok = 0
  if t.ok then ok = 1 end
  r[#r + 1] = ok
  r[#r + 1] = string.format('%.17g', t.tokens)
  r[#r + 1] = wait_for(t)
  r[#r + 1] = reset_after(t)
  r[#r + 1] = t.cap_s
  r[#r + 1] = t.rate_s
end
return r
