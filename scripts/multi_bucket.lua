-- bucketctl's multi-tier token bucket: all or nothing over several native buckets (KEYS, ARGV
-- and reply: scripts/doc.go). The refill is token_bucket.lua's.
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

-- Every tier is read and checked before anything is written.
local tiers, seen = {}, {}
for i = 1, n do
  local key = KEYS[i]
  local sfx = ' (tier ' .. i .. ')'
  if seen[key] then return redis.error_reply('ERR bucketctl: duplicate key' .. sfx) end
  seen[key] = true
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
  if now > ts then
    tokens, ts = tokens + ((now - ts) / 1000000) * rate, now
  end
  tokens = math.min(capacity, tokens)
  tiers[i] = { key = key, cap_s = cap_s, rate_s = rate_s, capacity = capacity, rate = rate,
               cost = cost, tokens = tokens, ts = ts,
               n_allowed = s_allowed or 0, n_denied = s_denied or 0 }
end

local function wait_for(t)
  if t.cost > t.capacity then return -1 end
  if t.tokens >= t.cost then return 0 end
  return math.ceil(((t.cost - t.tokens) / t.rate) * 1000000)
end

local denied, impossible = 0, false
for i = 1, n do
  local t = tiers[i]
  t.ok = t.tokens >= t.cost and t.cost <= t.capacity
  if t.cost > t.capacity then impossible = true end
  if not t.ok and denied == 0 then denied = i end
end

if not impossible then
  for i = 1, n do
    local t = tiers[i]
    if denied == 0 then
      t.tokens, t.n_allowed = t.tokens - t.cost, t.n_allowed + 1
    elseif not t.ok then
      t.n_denied = t.n_denied + 1
    end
    local last = denied == 0 and 1 or 0
    redis.call('SET', t.key, struct.pack('<c13BddI7I7ddI4', TAG, last, t.tokens, t.ts, t.n_allowed, t.n_denied,
      t.capacity, t.rate, 0), 'PX', ttl_ms(t.capacity, t.tokens, t.rate, grace))
  end
end

local r = { denied }
for i = 1, n do
  local t = tiers[i]
  r[#r + 1] = t.ok and 1 or 0
  r[#r + 1] = string.format('%.17g', t.tokens)
  r[#r + 1] = wait_for(t)
  r[#r + 1] = math.ceil(((t.capacity - t.tokens) / t.rate) * 1000000) -- until full
  r[#r + 1] = t.cap_s
  r[#r + 1] = t.rate_s
end
return r
