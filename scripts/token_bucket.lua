-- bucketctl native token bucket: one atomic decision per call.
--
-- KEYS[1]  bucket key: a string, the prelude's TAG then the packed level, time, spec and
--          counters (number.lua tagged()); a hash of the layout written before (native-hash:
--          tokens, ts, capacity, rate, allowed, denied) is read, and converted by the write
-- ARGV[1]  capacity in tokens, or "" to use the capacity stored in the bucket
-- ARGV[2]  refill rate in tokens per second, or "" to use the stored rate
-- ARGV[3]  cost in tokens (>= 0)
-- ARGV[4]  optional: now in microseconds (client clock); absent or "" = Redis TIME
-- ARGV[5]  optional: "peek" to only compute the decision (run it with EVALSHA_RO);
--          absent, "" or "take" to apply it
-- ARGV[6]  optional: extra TTL in milliseconds kept after the bucket is full (default 60000)
-- ARGV[7]  optional: "keep" refuses a capacity or rate that differs from the bucket's stored
--          spec (an error reply naming the stored one); absent or "": a given spec is
--          written into the bucket (the owning application changed its spec)
--
-- KEYS[2..n], ARGV[8..]  optional: more decisions in the same call (a batch: a Store's
--          concurrent Takes sharing one round trip), decision i taking KEYS[i] and
--          ARGV[8+3(i-2)], ARGV[9+3(i-2)], ARGV[10+3(i-2)] as its capacity, rate and cost;
--          ARGV[4..7] hold for all. Each is decided as if called alone, in order, at the
--          same server time (one TIME per call). A batch gives every capacity and rate
--          (a decision with "" is refused).
--
-- Reply: { allowed (0|1), remaining tokens (string), retry_after_us (integer, -1 = never),
--          reset_after_us (integer) } followed by capacity and rate (strings) when either
--          came from the bucket rather than from ARGV. A batch replies with one flat array
--          of four elements per key, those four, where a refused decision is an error
--          element and three zeros (a flat array: a table per decision would cost the server
--          its conversion).
-- Non-integers travel as strings: Redis truncates Lua numbers to integers.
-- Invalid arguments give an error reply and write nothing; so does a key that is not a
-- native bucket or one whose stored values are corrupt (the prelude, number.lua).
--
-- A decision is TIME, GET and one SET ... PX: the value and its TTL (the prelude's ttl_ms)
-- in one write, denies included (they count). The hot path is written for the server's
-- cost (a script runs its whole text on every call): the decisions are one loop at the top
-- level, not a function, the tag and ranges are checked inline (tagged() names a refusal),
-- and TIME is read once per call.
local fmt, ceil, sub = string.format, math.ceil, string.sub
local pack, unpack = struct.pack, struct.unpack
local keys, argv = KEYS, ARGV
local mode, keep = argv[5], argv[7] == 'keep'
-- The time of the call: ARGV[4], or Redis TIME read once, when the first decision needs it;
-- the grace: ARGV[6].
local now, grace = clock(argv[4], argv[6])
if now == false then return redis.error_reply(grace) end

local n, out = #keys, nil
if n > 1 then out = {} end
for i = 1, n do
  -- Decision i: KEYS[i] with its capacity, rate and cost. Its reply is a1..a4 (and the
  -- spec when it came from the bucket), or err, an error reply. break ends the decision.
  local key, cap_s, rate_s, cost_s = keys[i], argv[1], argv[2], argv[3]
  if i > 1 then
    local j = 3 * i + 2
    cap_s, rate_s, cost_s = argv[j], argv[j + 1], argv[j + 2]
  end
  if cap_s == '' then cap_s = nil end
  if rate_s == '' then rate_s = nil end
  local err, a1, a2, a3, a4, a5, a6
  repeat
    -- pcall: a key of another type is looked at below, not raised.
    local v = redis.pcall('GET', key)
    local s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = nil, nil, nil, nil, 0, 0
    if v then
      -- Identity: the tag and the payload's length and ranges (tagged() is the same check,
      -- naming what fails); a hash of the native-hash layout is read by native(). Anything
      -- else (another application's data, a corrupt bucket) is refused untouched.
      local kind, why
      if type(v) == 'string' then
        if #v == NATIVE_LEN and sub(v, 1, TAG_LEN) == TAG then
          local t, ts, c, r, a, d = unpack('<dddddd', v, TAG_LEN + 1)
          if t >= 0 and t <= MAX_TOKENS and ts >= 0 and ts <= MAX_TIME_US and c > 0 and c <= MAX_TOKENS
            and r > 0 and r - r == 0 and c / r <= MAX_REFILL_S and a >= 0 and a <= MAX_COUNTER
            and d >= 0 and d <= MAX_COUNTER then
            s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = t, ts, c, r, a, d
          end
        end
        if not s_tokens then s_tokens, kind, why = tagged(v) end
      elseif redis.call('TYPE', key)['ok'] == 'hash' then
        s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = native(redis.call('HGETALL', key))
        if not s_tokens then kind, why = s_ts, s_cap end
      else
        kind = 'none'
      end
      if not s_tokens then
        err = redis.error_reply(refusal(kind, why))
        break
      end
    end

    -- The spec: the given one, else (ARGV "") the stored one.
    -- ARGV[7] "keep": the stored spec is the application's; a given one that differs is refused.
    if keep and s_tokens and ((cap_s and num(cap_s) ~= s_cap) or (rate_s and num(rate_s) ~= s_rate)) then
      err = redis.error_reply('ERR bucketctl: stored spec differs: capacity ' .. fmt('%.17g', s_cap) .. ' rate ' .. fmt('%.17g', s_rate))
      break
    end
    if not cap_s or not rate_s then
      if not s_tokens then
        err = redis.error_reply('ERR bucketctl: no capacity/rate given and no such key')
        break
      end
      if out then
        err = redis.error_reply('ERR bucketctl: a batch gives every capacity and rate')
        break
      end
    end
    local capacity, rate, cost = s_cap, s_rate, 1
    if cap_s or rate_s or cost_s ~= '1' then
      -- A given capacity or rate is checked with the stored other (written as it reads back).
      local c_s, r_s = cap_s, rate_s
      if cap_s or rate_s then
        c_s, r_s = c_s or fmt('%.17g', s_cap), r_s or fmt('%.17g', s_rate)
      end
      local c, r, k = checked(c_s, r_s, cost_s)
      if c == false then
        err = redis.error_reply(r)
        break
      end
      if c_s then capacity, rate = c, r end
      cost = k
    end

    if not now then
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
    -- A cost above capacity can never succeed: deny without touching the bucket.
    if cost > capacity then
      a1, a2, a3 = 0, fmt('%.17g', tokens), -1
    elseif mode == 'peek' then
      a1, a2, a3 = 0, fmt('%.17g', tokens), 0
      if tokens >= cost then a1 = 1 else a3 = ceil(((cost - tokens) / rate) * 1000000) end
    else
      -- Written on deny too (the counter, and ts never goes stale), with the spec in use,
      -- converting a native-hash bucket (SET replaces a key of any type).
      a1 = 0
      if tokens >= cost then
        tokens = tokens - cost
        a1, s_allowed = 1, s_allowed + 1
      else
        s_denied = s_denied + 1
      end
      a2 = fmt('%.17g', tokens)
      redis.call('SET', key, TAG .. pack('<dddddd', tokens, ts, capacity, rate, s_allowed, s_denied),
        'PX', ttl_ms(capacity, tokens, rate, grace))
      a3 = 0
      if tokens < cost then a3 = ceil(((cost - tokens) / rate) * 1000000) end
    end
    a4 = ceil(((capacity - tokens) / rate) * 1000000)
    if not cap_s or not rate_s then a5, a6 = fmt('%.17g', capacity), fmt('%.17g', rate) end
  until true
  if out then
    local k = 4 * i - 3
    if err then a1, a2, a3, a4 = err, 0, 0, 0 end
    out[k], out[k + 1], out[k + 2], out[k + 3] = a1, a2, a3, a4
  elseif err then
    return err
  elseif a5 then
    return { a1, a2, a3, a4, a5, a6 }
  else
    return { a1, a2, a3, a4 }
  end
end
return out
