-- bucketctl multi-tier token bucket: one all-or-nothing decision over several buckets
-- (say a user's bucket, an endpoint bucket and an overall bucket), in one atomic call.
--
-- KEYS[1..n]  the tiers' bucket keys: native hashes, exactly as token_bucket.lua writes them.
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
  local h = redis.pcall('HGETALL', key)
  if h.err then
    return redis.error_reply('WRONGTYPE bucketctl: key holds another Redis type' .. sfx)
  end
  -- Identity (the prelude's native()): only a hash holding exactly a native bucket's
  -- fields, each a number of the one grammar and in range, is ever written.
  local s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied, st_cap, st_rate
  if h[1] then
    s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied, st_cap, st_rate = native(h)
    if s_tokens == nil then -- refused: s_ts is the kind of refusal, s_cap why
      return redis.error_reply(refusal(s_ts, s_cap) .. sfx)
    end
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
               spec_changed = st_cap ~= cap_s or st_rate ~= rate_s,
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

-- Numbers go to HSET as Lua numbers: Redis writes them with full precision. tokens and ts
-- are written back on deny too; a counter only when it moves; the spec only when it is new
-- or changed. The TTL is the prelude's cover(), as token_bucket.lua sets it: a tier that
-- took nothing only refilled, so only an allow or a new spec can need a longer one.
if not impossible then
  for i = 1, n do
    local t = tiers[i]
    local args, count = { 'tokens', 0, 'ts', t.ts }, 0
    local was_full = t.tokens >= t.capacity -- (for the TTL rule: see cover())
    if denied == 0 then
      t.tokens, count = t.tokens - t.cost, t.n_allowed + 1
      args[5], args[6] = 'allowed', count
    elseif not t.ok then
      count = t.n_denied + 1
      args[5], args[6] = 'denied', count
    end
    args[2] = t.tokens
    if t.spec_changed then
      args[#args + 1] = 'capacity'; args[#args + 1] = t.cap_s
      args[#args + 1] = 'rate'; args[#args + 1] = t.rate_s
    end
    redis.call('HSET', t.key, unpack(args))
    if denied == 0 or t.spec_changed then
      cover(t.key, t.capacity, t.tokens, t.rate, t.cost, count, grace, t.spec_changed or was_full)
    end
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
