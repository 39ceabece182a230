-- bucketctl's native token bucket (KEYS, ARGV and reply: scripts/doc.go). For the server's cost,
-- the prelude's functions are made only on a refusal or a rare argument.
local keys, argv = KEYS, ARGV
local cap1, rate1, cost1, mode = argv[1], argv[2], argv[3], argv[5]
local fn -- the prelude's functions, made when first needed
local st = rawget(_G, 'struct')
if not st then
  fn = { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
  st = fn[8]
end
local pack, unpack = st.pack, st.unpack

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
  local key, cap_s, rate_s, cost_s = keys[i], cap1, rate1, cost1
  if i > 1 then
    local j = 3 * i + 2
    cap_s, rate_s, cost_s = argv[j], argv[j + 1], argv[j + 2]
  end
  local err, reply
  repeat
    local v = redis.pcall('GET', key) -- a key of another type is looked at below
    local s_tokens, s_ts, s_allowed, s_denied, s_cap, s_rate, s_exp
    if v then
      -- tagged() makes the same checks, naming what fails; #v of an error reply is 0.
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

    local capacity, rate, cost, same, own = nil, nil, 1, false, false
    if cap_s and rate_s and cap_s ~= '' and rate_s ~= '' then
      if i == 1 then capacity, rate = cap_s + 0, rate_s + 0 else capacity, rate = tonumber(cap_s), tonumber(rate_s) end
      same = s_exp and capacity == s_cap and rate == s_rate
    end
    if not same then
      fn = fn or { prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S) }
      if cap_s == '' then cap_s = nil end
      if rate_s == '' then rate_s = nil end
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
    if now > ts then
      tokens = tokens + ((now - ts) / 1000000) * rate
      ts = now
    end
    if tokens > capacity then tokens = capacity end

    local form = own and '<BddI7I7dd' or '<BddI7I7'
    if cost > capacity or peek then
      local f = (tokens >= cost and cost <= capacity) and 1 or 0
      reply = pack(form, f, tokens, ts, allowed, denied, capacity, rate)
    else
      local f = 0
      if tokens >= cost then
        tokens, allowed, f = tokens - cost, allowed + 1, 1
      else
        denied = denied + 1
      end
      local full, ok = ((capacity - tokens) / rate) * 1000
      if same and server and ts + (full + grace) * 1000 <= s_exp * 1000000 then
        reply = pack(form, f, tokens, ts, allowed, denied, capacity, rate)
        -- A refused write (ACL, OOM) is raised alone, naming the line; a batch's element.
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
