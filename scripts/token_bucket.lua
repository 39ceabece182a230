-- bucketctl native token bucket: one atomic decision per call.
--
-- KEYS[1]  bucket key: a string, the prelude's TAG then the packed fields (number.lua); a
--          hash of the layout written before (native-hash: tokens, ts, capacity, rate,
--          allowed, denied) is read, and converted by the write
-- ARGV[1]  capacity in tokens, or "" to use the capacity stored in the bucket
-- ARGV[2]  refill rate in tokens per second, or "" to use the stored rate
-- ARGV[3]  cost in tokens (>= 0); absent: 1
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
-- Reply: one string, the decision's record as the bucket stores it from byte 14 on:
--          struct '<BddI7I7': allowed (1|0), tokens left, ts, the allowed and denied counters
--          after it; then capacity and rate ('dd') when either came from the bucket rather
--          than from ARGV. Retry-after and reset-after follow from them and the cost, as
--          bucket/script.go computes them. A batch replies with an array of those, where a
--          refused decision is an error element.
-- Invalid arguments give an error reply and write nothing; so does a key that is not a
-- native bucket or one whose stored values are corrupt (the prelude, number.lua). A
-- capacity or rate of a lone decision that is no number at all (not even to tonumber)
-- raises Lua's arithmetic error instead of bucketctl's: nothing is written either.
--
-- A decision is TIME, GET and one write: SET ... PX (value and TTL together: a new bucket,
-- a spec change, a TTL too short for the time to full plus the grace, a client clock), or
-- else SETRANGE of bytes 14 to 44 (or 60), which keeps the key's TTL (the stored expires
-- covers what this decision needs). Denies write too (they count). The hot path is
-- written for the server's cost (a script runs its whole text on every call): one loop at
-- the top level, the tag and ranges checked inline, a given spec equal to the stored one
-- compared as numbers, not re-checked by the grammar; the prelude's functions are made
-- only on a refusal or a rare argument.
local keys, argv = KEYS, ARGV
local cap1, rate1, cost1, mode = argv[1], argv[2], argv[3], argv[5]
-- fn: the prelude's functions (num, native, refusal, tagged, ttl_ms, checked, clock,
-- struct), made when first needed.
local fn
local st = rawget(_G, 'struct')
if not st then
  fn = { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
  st = fn[8]
end
local pack, unpack = st.pack, st.unpack

-- The time of the call: ARGV[4] (then every write sets its TTL), or Redis TIME read once,
-- when the first decision needs it; the grace: ARGV[6].
local now, grace, server = nil, 60000, true
local now_s, grace_s = argv[4], argv[6]
if (now_s and now_s ~= '') or (grace_s and grace_s ~= '') then
  fn = fn or { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
  now, grace = fn[7](now_s, grace_s)
  if now == false then return redis.error_reply(grace) end
  server = now == nil
end
local keep, peek = argv[7] == 'keep', mode == 'peek'

local n, out = #keys, nil
if n > 1 then out = {} end
for i = 1, n do
  -- Decision i: KEYS[i] with its capacity, rate and cost; its reply, or err (an error
  -- reply). break ends the decision.
  local key, cap_s, rate_s, cost_s = keys[i], cap1, rate1, cost1
  if i > 1 then
    local j = 3 * i + 2
    cap_s, rate_s, cost_s = argv[j], argv[j + 1], argv[j + 2]
  end
  local err, reply
  repeat
    -- pcall: a key of another type is looked at below, not raised.
    local v = redis.pcall('GET', key)
    -- s_exp is set only for a bucket read from its tagged string.
    local s_tokens, s_ts, s_allowed, s_denied, s_cap, s_rate, s_exp
    if v then
      -- Identity: the tag, the length and the ranges (tagged() is the same check, naming
      -- what fails; #v of an error reply, a table, is 0). A hash of the native-hash layout
      -- is read by native(). Anything else (another application's data, a corrupt bucket)
      -- is refused untouched.
      -- (The byte of the last outcome, skipped here, is only ever written.)
      if #v == NATIVE_LEN then
        local tag, t
        tag, t, s_ts, s_allowed, s_denied, s_cap, s_rate, s_exp = unpack('<c13xddI7I7ddI4', v)
        if tag == TAG and t >= 0 and t <= MAX_TOKENS and s_ts >= 0 and s_ts <= MAX_TIME_US
          and s_allowed <= MAX_COUNTER and s_denied <= MAX_COUNTER and s_cap > 0 and s_cap <= MAX_TOKENS
          and s_rate > 0 and s_rate - s_rate == 0 and s_cap / s_rate <= MAX_REFILL_S then
          s_tokens = t
        else
          s_exp = nil
        end
      end
      if not s_tokens then
        fn = fn or { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
        local kind, why
        if type(v) == 'string' then
          s_tokens, kind, why = fn[4](v)
        elseif redis.call('TYPE', key)['ok'] == 'hash' then
          s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = fn[2](redis.call('HGETALL', key))
          if not s_tokens then kind, why = s_ts, s_cap end
        else
          kind = 'none'
        end
        if not s_tokens then
          err = redis.error_reply(fn[3](kind, why))
          break
        end
      end
    end

    -- The spec: the given one, else (ARGV "") the stored one. The common case, a given
    -- spec equal to the stored one, is compared as numbers: nothing of ARGV is written.
    local capacity, rate, cost, same, own = nil, nil, 1, false, false
    if cap_s and rate_s and cap_s ~= '' and rate_s ~= '' then
      -- (Arithmetic converts as tonumber does, without its call; a string that is no
      -- number at all raises Lua's error, for a lone decision only: nothing is written.)
      if i == 1 then capacity, rate = cap_s + 0, rate_s + 0 else capacity, rate = tonumber(cap_s), tonumber(rate_s) end
      same = s_exp and capacity == s_cap and rate == s_rate
    end
    if not same then
      fn = fn or { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
      if cap_s == '' then cap_s = nil end
      if rate_s == '' then rate_s = nil end
      -- ARGV[7] "keep": the stored spec is the application's; a given one that differs is refused.
      if keep and s_tokens and ((cap_s and tonumber(cap_s) ~= s_cap) or (rate_s and tonumber(rate_s) ~= s_rate)) then
        err = redis.error_reply('ERR bucketctl: stored spec differs: capacity ' .. string.format('%.17g', s_cap)
          .. ' rate ' .. string.format('%.17g', s_rate))
        break
      end
      own = not cap_s or not rate_s
      if own then
        if not s_tokens then
          err = redis.error_reply('ERR bucketctl: no capacity/rate given and no such key')
          break
        end
        if out then
          err = redis.error_reply('ERR bucketctl: a batch gives every capacity and rate')
          break
        end
      end
      -- A given capacity or rate is checked with the stored other (written as it reads back).
      capacity, rate = s_cap, s_rate
      if cap_s or rate_s then
        local c, r = fn[6](cap_s or string.format('%.17g', s_cap), rate_s or string.format('%.17g', s_rate), '1')
        if c == false then
          err = redis.error_reply(r)
          break
        end
        capacity, rate = c, r
      end
      same = s_exp and capacity == s_cap and rate == s_rate
    end
    if cost_s ~= '1' and (cost_s or i > 1) then
      fn = fn or { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
      local _, r, k = fn[6](nil, nil, cost_s)
      if _ == false then
        err = redis.error_reply(r)
        break
      end
      cost = k
    end

    if not now then
      local t = redis.call('TIME')
      now = t[1] * 1000000 + t[2]
    end

    local tokens, ts, allowed, denied = s_tokens, s_ts, s_allowed or 0, s_denied or 0
    if tokens == nil then
      tokens, ts = capacity, now
    end
    -- Time never runs backwards: a late caller with an older clock refills nothing.
    if now > ts then
      tokens = tokens + ((now - ts) / 1000000) * rate
      ts = now
    end
    if tokens > capacity then tokens = capacity end

    -- The record: allowed, tokens left, ts and counters (then the spec when it came from
    -- the bucket). A cost above capacity can never succeed: deny without touching the bucket.
    local form = '<BddI7I7'
    if own then form = '<BddI7I7dd' end
    if cost > capacity or peek then
      local f = 0
      if tokens >= cost and cost <= capacity then f = 1 end
      reply = pack(form, f, tokens, ts, allowed, denied, capacity, rate)
    else
      -- Written on deny too (the counter, and ts never goes stale), with the spec in use,
      -- converting a native-hash bucket.
      local f = 0
      if tokens >= cost then
        tokens, allowed, f = tokens - cost, allowed + 1, 1
      else
        denied = denied + 1
      end
      -- The TTL: the time to full in ms plus the grace. It stands when the stored expires
      -- (server clock) covers it; else SET PX sets it with half the grace again as
      -- headroom, so that the next allows find it long enough and rewrite in place.
      local full, ok = ((capacity - tokens) / rate) * 1000
      if same and server and ts + (full + grace) * 1000 <= s_exp * 1000000 then
        reply = pack(form, f, tokens, ts, allowed, denied, capacity, rate)
        -- A refused write (an ACL, OOM) is raised for a lone decision (the error then names
        -- the script's line), and is the decision's error in a batch.
        if out then ok = redis.pcall('SETRANGE', key, '13', reply) else ok = redis.call('SETRANGE', key, '13', reply) end
        if ok ~= NATIVE_LEN then err = ok end
      else
        local ttl, e = math.ceil(full) + grace, 0
        if server then
          ttl = ttl + math.floor(grace / 2)
          e = math.floor((now + (ttl - 1000) * 1000) / 1000000)
          if e < 0 then e = 0 end
        end
        if ttl < 1 then ttl = 1 end
        local w = pack('<c13BddI7I7ddI4', TAG, f, tokens, ts, allowed, denied, capacity, rate, e)
        if out then ok = redis.pcall('SET', key, w, 'PX', ttl) else ok = redis.call('SET', key, w, 'PX', ttl) end
        if ok.err then err = ok end
        if own then reply = string.sub(w, 14, 60) else reply = string.sub(w, 14, 44) end
      end
    end
  until true
  if out then
    out[i] = err or reply
  elseif err then
    return err
  else
    return reply
  end
end
return out
