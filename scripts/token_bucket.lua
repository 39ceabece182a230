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

-- The hot path is written for the server's cost (a script runs its whole text on every
-- call): the decisions are one loop at the top level, not a function (no closure, no upvalues
-- made and closed per call), one HGETALL reads a bucket whole (its identity needs every field:
-- a missing key reads {}, another type is an error), TIME is read once per call, and the time
-- written is TIME's own digits, not a number formatted again.
local fmt, ceil = string.format, math.ceil
local keys, argv = KEYS, ARGV
local mode, keep = argv[5], argv[7] == 'keep'
-- The time of the call: ARGV[4], or Redis TIME read once, when the first decision needs it
-- (now_s: the same time as TIME's digits, written as the bucket's ts); the grace: ARGV[6].
local now, grace = clock(argv[4], argv[6])
if now == false then return redis.error_reply(grace) end
local now_s

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
  local err, a1, a2, a3, a4
  local cap_a, rate_a = cap_s, rate_s
  repeat
    -- pcall: a key of another type is refused below, not raised.
    local h = redis.pcall('HGETALL', key)
    if h.err then
      err = redis.error_reply('WRONGTYPE bucketctl: the key exists but is not a token bucket')
      break
    end
    -- Identity (the prelude's native()): only a hash holding exactly a native bucket's fields,
    -- each a number of the one grammar and in range, is ever written. Another application's
    -- bucket, application data and a corrupt bucket are refused untouched.
    local s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied, st_cap, st_rate = nil, nil, nil, nil, 0, 0
    if h[1] then
      s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied, st_cap, st_rate = native(h)
      if s_tokens == nil then -- refused: s_ts is the kind of refusal, s_cap why
        err = redis.error_reply(refusal(s_ts, s_cap))
        break
      end
    end

    if cap_s == nil or cap_s == '' then cap_s = st_cap end
    if rate_s == nil or rate_s == '' then rate_s = st_rate end
    -- ARGV[7] "keep": the stored spec is the application's; a given one that differs is refused.
    if keep and s_tokens and (num(cap_s) ~= s_cap or num(rate_s) ~= s_rate) then
      err = redis.error_reply('ERR bucketctl: stored spec differs: capacity ' .. st_cap .. ' rate ' .. st_rate)
      break
    end
    if not cap_s or not rate_s then
      if not s_tokens then
        err = redis.error_reply('ERR bucketctl: no capacity/rate given and no such key')
      else
        err = redis.error_reply('ERR bucketctl: no capacity/rate given and none stored in the bucket')
      end
      break
    end
    if out and (cap_a == '' or rate_a == '') then
      err = redis.error_reply('ERR bucketctl: a batch gives every capacity and rate')
      break
    end
    -- A given spec equal to the stored one (the common path) is the stored one, which native()
    -- has read by the grammar and checked against the same ranges as below.
    local capacity, rate, cost = s_cap, s_rate, 1
    local spec_changed = cap_s ~= st_cap or rate_s ~= st_rate
    if spec_changed or cost_s ~= '1' then
      local c_s = nil
      if spec_changed then c_s = cap_s end
      local c, r, k = checked(c_s, rate_s, cost_s)
      if c == false then
        err = redis.error_reply(r)
        break
      end
      if spec_changed then capacity, rate = c, r end
      cost = k
    end

    if not now then
      -- TIME's two decimal strings, converted by Lua's arithmetic; now_s is the same time
      -- written out (the microseconds padded to six digits).
      local t = redis.call('TIME')
      local us = t[2]
      now = t[1] * 1000000 + us
      if #us < 6 then us = string.sub('00000', #us) .. us end
      now_s = t[1] .. us
    end

    local tokens, ts, ts_s = s_tokens, s_ts, now_s
    if tokens == nil then
      tokens, ts = capacity, now
    end
    -- Time never runs backwards: a late caller with an older clock refills nothing.
    if now > ts then
      tokens = tokens + ((now - ts) / 1000000) * rate
      ts = now
    elseif ts ~= now then
      ts_s = nil
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
      -- tokens is formatted once with %.17g (full precision) for HSET and the reply; ts goes
      -- as TIME's digits (or as a Lua number, which Redis writes with %.17g too, when the
      -- clock is the caller's or the stored time is kept), the counter as a Lua number.
      -- tokens and ts are written back on deny too, so ts never goes stale; the spec only when
      -- it is new or changed.
      local counter, count = 'denied', s_denied + 1
      local was_full = tokens >= capacity -- (for the TTL rule: see cover())
      a1 = 0
      if tokens >= cost then
        tokens = tokens - cost
        a1, counter, count = 1, 'allowed', s_allowed + 1
      end
      a2 = fmt('%.17g', tokens)
      if spec_changed then
        redis.call('HSET', key, 'tokens', a2, 'ts', ts_s or ts, counter, count, 'capacity', cap_s, 'rate', rate_s)
      else
        redis.call('HSET', key, 'tokens', a2, 'ts', ts_s or ts, counter, count)
      end
      -- The TTL (the prelude's cover()): only an allow or a new spec can need a longer one.
      if a1 == 1 or spec_changed then
        cover(key, capacity, tokens, rate, cost, count, grace, spec_changed or was_full)
      end
      a3 = 0
      if tokens < cost then a3 = ceil(((cost - tokens) / rate) * 1000000) end
    end
    a4 = ceil(((capacity - tokens) / rate) * 1000000)
  until true
  if out then
    local k = 4 * i - 3
    if err then a1, a2, a3, a4 = err, 0, 0, 0 end
    out[k], out[k + 1], out[k + 2], out[k + 3] = a1, a2, a3, a4
  elseif err then
    return err
  elseif cap_a == '' or rate_a == '' then
    return { a1, a2, a3, a4, cap_s, rate_s }
  else
    return { a1, a2, a3, a4 }
  end
end
return out
