-- bucketctl native token bucket: one atomic decision per call.
--
-- KEYS[1]  bucket key (a hash: tokens, ts, capacity, rate, allowed, denied)
-- ARGV[1]  capacity in tokens, or "" to use the capacity stored in the bucket
-- ARGV[2]  refill rate in tokens per second, or "" to use the stored rate
-- ARGV[3]  cost in tokens (>= 0)
-- ARGV[4]  optional: now in microseconds (client clock); absent or "" = Redis TIME
-- ARGV[5]  optional: "peek" to only compute the decision (run it with EVALSHA_RO);
--          absent, "" or "take" to apply it
-- ARGV[6]  optional: extra TTL in milliseconds kept after the bucket is full (default 60000);
--          an allow that must extend the TTL adds half of it again as headroom
-- ARGV[7]  optional: "keep" refuses a capacity or rate that differs from the bucket's stored
--          spec (an error reply naming the stored one); absent or "": a given spec is
--          written into the bucket (the owning application changed its spec)
--
-- KEYS[2..n], ARGV[8..]  optional: more decisions in the same call (a batch: a Store's
--          concurrent Takes sharing one round trip), decision i taking KEYS[i] and
--          ARGV[8+3(i-2)], ARGV[9+3(i-2)], ARGV[10+3(i-2)] as its capacity, rate and cost;
--          ARGV[4..7] hold for all. Each is decided as if called alone, in order, at the
--          same server time (one TIME per call).
--
-- Reply: { allowed (0|1), remaining tokens (string), retry_after_us (integer, -1 = never),
--          reset_after_us (integer) } followed by capacity and rate (strings) when either
--          came from the bucket rather than from ARGV. A batch replies with an array of
--          those, one per key, where a refused decision is an error element.
-- Non-integers travel as strings: Redis truncates Lua numbers to integers.
-- Invalid arguments give an error reply and write nothing; so does a key that is not a
-- native bucket or one whose stored values are corrupt (the prelude, number.lua).

local fmt, ceil, tonum = string.format, math.ceil, tonumber
local mode, grace = ARGV[5], tonum(ARGV[6]) or 60000
local keep = ARGV[7] == 'keep'
-- The time of the call: ARGV[4], or Redis TIME read once, when the first decision needs it.
local clock, now = ARGV[4], nil
if clock ~= nil and clock ~= '' then
  now = tonum(clock)
  if not now or now ~= now or now >= math.huge or now <= -math.huge then
    return redis.error_reply('ERR bucketctl: now must be microseconds')
  end
end

-- decide(key, cap_s, rate_s, cost_s): one decision; its reply, or an error reply (a table
-- {err = ...}, which a batch returns as its element and a lone call as its reply).
local function decide(key, cap_s, rate_s, cost_s)
  -- One read of the six fields, and HLEN, when any is there, for whether the hash holds
  -- others too. pcall: a key of another type is refused below, not raised.
  local st = redis.pcall('HMGET', key, 'tokens', 'ts', 'capacity', 'rate', 'allowed', 'denied')
  if st.err then
    return redis.error_reply('WRONGTYPE bucketctl: the key exists but is not a token bucket')
  end
  -- Identity (the prelude's native()): only a hash holding exactly a native bucket's fields,
  -- each a number of the one grammar and in range, is ever written. Another application's
  -- bucket, application data and a corrupt bucket are refused untouched.
  local s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied
  if st[1] or st[2] or st[3] or st[4] or st[5] or st[6] then
    s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = native(st, redis.call('HLEN', key))
    if s_tokens == nil then -- refused: s_ts is the kind of refusal, s_cap why
      if s_ts == 'corrupt' then
        return redis.error_reply('ERR bucketctl: corrupt bucket: ' .. s_cap .. ': left untouched')
      end
      if st[1] and not st[3] then
        return redis.error_reply('ERR bucketctl: not a native bucket (no capacity field): another layout, use inspect/reset with --layout')
      end
      return redis.error_reply('ERR bucketctl: not a native bucket (' .. s_cap .. '): left untouched')
    end
  elseif redis.call('EXISTS', key) == 1 then
    return redis.error_reply('WRONGTYPE bucketctl: the key exists but is not a token bucket')
  end

  local cap_a, rate_a = cap_s, rate_s
  if cap_s == nil or cap_s == '' then cap_s = st[3] end
  if rate_s == nil or rate_s == '' then rate_s = st[4] end
  -- ARGV[7] "keep": the stored spec is the application's; a given one that differs is refused.
  if keep and s_tokens and (num(cap_s) ~= s_cap or num(rate_s) ~= s_rate) then
    return redis.error_reply('ERR bucketctl: stored spec differs: capacity ' .. st[3] .. ' rate ' .. st[4])
  end
  if not cap_s or not rate_s then
    if not st[1] then
      return redis.error_reply('ERR bucketctl: no capacity/rate given and no such key')
    end
    return redis.error_reply('ERR bucketctl: no capacity/rate given and none stored in the bucket')
  end
  -- A given spec equal to the stored one (the common path) is the stored one, which native()
  -- has read by the grammar and checked against the same ranges as below.
  local capacity, rate, cost
  if cap_s == st[3] then capacity = s_cap else capacity = num(cap_s) end
  if rate_s == st[4] then rate = s_rate else rate = num(rate_s) end
  -- A cost of 1, the common one, needs no parsing.
  if cost_s == '1' then cost = 1 else cost = num(cost_s) end
  -- (num() refuses what is not finite; the checks below are written out, not in functions.)
  if not capacity or capacity <= 0 or capacity > MAX_TOKENS then
    return redis.error_reply('ERR bucketctl: capacity must be a positive finite number of at most 1e15')
  end
  if not rate or rate <= 0 then
    return redis.error_reply('ERR bucketctl: rate must be a positive finite number')
  end
  -- A bucket must refill within 100 years, so its TTL (PEXPIRE, milliseconds) stays finite.
  if capacity / rate > MAX_REFILL_S then
    return redis.error_reply('ERR bucketctl: capacity/rate must refill within 100 years')
  end
  if not cost or cost < 0 then
    return redis.error_reply('ERR bucketctl: cost must be a finite number >= 0')
  end

  if not now then
    -- TIME's two decimal strings, converted by Lua's arithmetic (no tonumber calls).
    local t = redis.call('TIME')
    now = t[1] * 1000000 + t[2]
  end

  local tokens, ts = s_tokens, s_ts
  if tokens == nil then
    tokens, ts = capacity, now
  end
  -- Time never runs backwards: a late caller with an older clock refills nothing.
  if now > ts then
    tokens = tokens + ((now - ts) / 1000000) * rate
    ts = now
  end
  if tokens > capacity then tokens = capacity end

  -- The reply: allowed, tokens left, retry-after (until cost tokens are there; -1 never),
  -- reset-after (until full), then the spec when it came from the bucket.
  local r = { 0, 0, 0, 0 }
  if cap_a == '' or rate_a == '' then r[5] = cap_s; r[6] = rate_s end

  -- A cost above capacity can never succeed: deny without touching the bucket.
  if cost > capacity then
    r[2], r[3], r[4] = fmt('%.17g', tokens), -1, ceil(((capacity - tokens) / rate) * 1000000)
    return r
  end

  local allowed, tok_s = 0, nil
  if mode == 'peek' then
    if tokens >= cost then allowed = 1 end
  else
    -- tokens is formatted once with %.17g (full precision) for HSET and the reply; ts and the
    -- counter go as Lua numbers, which Redis writes with %.17g too.
    -- tokens and ts are written back on deny too, so ts never goes stale; the spec only when
    -- it is new or changed. The TTL is at least the time until full (expiry of a full bucket
    -- is lossless: a missing bucket starts full) plus a grace that keeps the counters readable.
    local spec_changed = st[3] ~= cap_s or st[4] ~= rate_s
    local counter, count = 'denied', (s_denied or 0) + 1
    if tokens >= cost then
      tokens = tokens - cost
      allowed, counter, count = 1, 'allowed', (s_allowed or 0) + 1
    end
    tok_s = fmt('%.17g', tokens)
    if spec_changed then
      redis.call('HSET', key, 'tokens', tok_s, 'ts', ts, counter, count, 'capacity', cap_s, 'rate', rate_s)
    else
      redis.call('HSET', key, 'tokens', tok_s, 'ts', ts, counter, count)
    end
    -- A deny only refills, which shortens the time to full: the TTL set before still covers it.
    -- An allow lengthens it by cost/rate. PTTL says whether the TTL left covers the new time
    -- to full plus the grace (need) with a margin of a quarter of the grace; only when it
    -- does not (or the key has none) is it set, to need plus half the grace. A TTL is never
    -- shortened. So after each check the TTL exceeds need by a quarter of the grace, and an
    -- allow whose cost/rate is at most 1/32 of half the grace need not check: the script
    -- checks on every 16th allow of the bucket (the counter), so the at most 15 between
    -- checks use less than that quarter. A busy bucket reads its TTL on one allow in 16.
    if allowed == 1 or spec_changed then
      local margin = grace / 2
      if spec_changed or math.floor(count) % 16 == 0 or cost / rate * 32000 > margin then
        local need = ceil(((capacity - tokens) / rate) * 1000) + grace
        if redis.call('PTTL', key) < need + margin / 2 then
          redis.call('PEXPIRE', key, need + ceil(margin))
        end
      end
    end
  end

  r[1], r[2], r[4] = allowed, tok_s or fmt('%.17g', tokens), ceil(((capacity - tokens) / rate) * 1000000)
  if tokens < cost then r[3] = ceil(((cost - tokens) / rate) * 1000000) end
  return r
end

local n = #KEYS
if n == 1 then return decide(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) end
local out = { decide(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) }
for i = 2, n do
  local j = 3 * i + 2
  out[i] = decide(KEYS[i], ARGV[j], ARGV[j + 1], ARGV[j + 2])
end
return out
