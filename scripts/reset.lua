-- bucketctl reset: compare-and-delete or compare-and-set one bucket of any layout; its
-- arguments and replies are in scripts/doc.go.
local num, native, refusal, tagged, ttl_ms, checked, clock, struct =
  prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S)

local mode, kind = ARGV[1], ARGV[2]
local declared = ARGV[13] ~= nil and ARGV[13] ~= ''
local given_now, why = clock(ARGV[11])
if given_now == false then return redis.error_reply(why) end
local function now_us()
  if given_now then return given_now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local unit_us = { s = 1000000, ms = 1000, us = 1, ns = 0.001 }

if kind == 'tagged' then
  if #KEYS ~= 1 then return redis.error_reply('ERR bucketctl: a native bucket is one key') end
  local t = redis.call('TYPE', KEYS[1])['ok']
  local s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied
  if t == 'string' then
    -- A string of another length is not read whole: its tag says corrupt or not a bucket.
    if redis.call('STRLEN', KEYS[1]) ~= NATIVE_LEN then
      s_ts = 'none'
      if redis.call('GETRANGE', KEYS[1], 0, TAG_LEN - 1) == TAG then s_ts = 'corrupt' end
    else
      s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = tagged(redis.call('GET', KEYS[1]))
    end
  elseif t == 'hash' then
    if redis.call('HLEN', KEYS[1]) > 6 then return -1 end
    s_tokens, s_ts, s_cap, s_rate, s_allowed, s_denied = native(redis.call('HGETALL', KEYS[1]))
  elseif t ~= 'none' then
    return -1
  end
  if t ~= 'none' and not s_tokens then return s_ts == 'corrupt' and -2 or -1 end
  if mode == 'delete' then
    if t == 'none' then return 0 end
    redis.call('DEL', KEYS[1])
    return 1
  end
  local cap, rate, allowed, denied = s_cap, s_rate, s_allowed, s_denied
  if t == 'none' or ARGV[14] == 'respec' then
    local c, r = checked(ARGV[16], ARGV[18], '1')
    if c == false then return redis.error_reply(r) end
    cap, rate = c, r
  end
  if t == 'none' then allowed, denied = 0, 0 end
  local tokens = num(ARGV[7])
  if not tokens or tokens < 0 or tokens > cap then
    return redis.error_reply('ERR bucketctl: tokens must be a number from 0 to the capacity')
  end
  local _, grace = clock(nil, ARGV[10])
  if _ == false then return redis.error_reply(grace) end
  local ts = now_us()
  if s_ts and s_ts > ts and ARGV[12] ~= '0' then ts = s_ts end
  -- The TTL covers the refill and the grace; a longer one the key had is kept.
  local ttl = ttl_ms(cap, tokens, rate, grace)
  if t ~= 'none' then ttl = math.max(ttl, redis.call('PTTL', KEYS[1])) end
  redis.call('SET', KEYS[1], struct.pack('<c13BddI7I7ddI4', TAG, 0, tokens, ts, allowed, denied, cap, rate, 0), 'PX', ttl)
  return t == 'none' and 2 or 1
end

if kind ~= 'gcra' and kind ~= 'json' and kind ~= 'mennanov-keys' then
  -- hash or strings
  local hash = kind == 'hash'
  local t1 = redis.call('TYPE', KEYS[1])['ok']
  local types, missing = { t1 }, t1 == 'none'
  for i = 2, #KEYS do
    types[i] = redis.call('TYPE', KEYS[i])['ok']
    if types[i] ~= 'none' then missing = false end
  end
  local div = unit_us[ARGV[8]]
  if div == nil then return redis.error_reply('ERR bucketctl: unknown time unit ' .. tostring(ARGV[8])) end

  local stored = false
  if not missing and hash then
    if t1 ~= 'hash' or redis.call('HLEN', KEYS[1]) > 6 then return -1 end
    if ARGV[5] == 'capacity,rate' then -- the native layout
      local tokens, ts = native(redis.call('HGETALL', KEYS[1]))
      if tokens == nil then return ts == 'corrupt' and -2 or -1 end
      stored = ts
    else
      if not declared then return -3 end
      -- Each value a number; the tokens, time and required fields present, others optional.
      local tf, timef, req, opt = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
      local need, present = 2, 0
      if req ~= '' then
        for _ in string.gmatch(req, '[^,]+') do need = need + 1 end
      end
      local flat, tok, t, over = redis.call('HGETALL', KEYS[1]), nil, nil, false
      for i = 1, #flat, 2 do
        local f, s, v, o = flat[i], flat[i + 1], nil, nil
        if #s <= 64 and string.find(s, '^%d+%.?%d*$') then v = s + 0 else v, o = num(s) end -- num's common case
        if v == nil and not o then return -1 end
        over = over or o ~= nil
        if f == tf then tok, present = v, present + 1
        elseif f == timef then t, present = v, present + 1
        elseif f == '' or string.find(f, ',', 1, true) then return -1
        elseif req ~= '' and string.find(',' .. req .. ',', ',' .. f .. ',', 1, true) then present = present + 1
        elseif opt == '' or not string.find(',' .. opt .. ',', ',' .. f .. ',', 1, true) then return -1 end
      end
      if present ~= need then return -1 end
      if over or tok < 0 or tok > MAX_TOKENS or t < 0 or t * div > MAX_TIME_US then return -2 end
      stored = t
    end
  elseif not missing then
    -- Two number keys; a lone level only where declared, within ARGV[13]'s capacity and PTTLs.
    local vals = {}
    for i = 1, #KEYS do
      if types[i] == 'none' and i > 1 and t1 ~= 'none' then
        if not declared then return -3 end
      elseif types[i] ~= 'string' or redis.call('STRLEN', KEYS[i]) > 64 then
        return -1
      else
        local v, o = num(redis.call('GET', KEYS[i]))
        if v == nil then return o and -2 or -1 end
        vals[i] = v
      end
    end
    if not declared then return -3 end
    if vals[2] == nil then -- a declared lone level: its application reads the time as now
      local cap, lo, hi = string.match(ARGV[13], '^([^,]*),?(-?%d*),?(-?%d*)$')
      local most = num(cap)
      if not most or most <= 0 or vals[1] < 0 or vals[1] > most then return -1 end
      if lo ~= nil and lo ~= '' then
        local pttl = redis.call('PTTL', KEYS[1])
        if pttl < tonumber(lo) or pttl > tonumber(hi) then return -1 end
      end
      if vals[1] > MAX_TOKENS then return -2 end
      stored = nil
    else
      if vals[1] < 0 or vals[1] > MAX_TOKENS or vals[2] < 0 or vals[2] * div > MAX_TIME_US then return -2 end
      stored = vals[2]
    end
  end

  if mode == 'delete' then
    if missing then return 0 end
    redis.call('DEL', unpack(KEYS))
    return 1
  end
  -- Time never moves backwards: a later stored time is kept (unless ARGV[12] is "0").
  local t = now_us() / div
  if ARGV[9] ~= '1' then t = math.floor(t) end
  if stored and stored > t and ARGV[12] ~= '0' then t = stored end
  local ts
  if ARGV[9] == '1' and div ~= 1 then ts = string.format('%.6f', t) else ts = string.format('%d', t) end
  local ttl = tonumber(ARGV[10])
  local function expire(k, before)
    if ttl ~= nil and (before < 0 or before < ttl) then redis.call('PEXPIRE', k, ttl) end
  end
  if hash then
    local before = redis.call('PTTL', KEYS[1])
    local args = { ARGV[3], ARGV[7], ARGV[4], ts }
    if ARGV[15] == 'time-first' then -- written anew, in order, its TTL kept if longer
      args = { ARGV[4], ts, ARGV[3], ARGV[7] }
      redis.call('DEL', KEYS[1])
      if before > 0 and (ttl == nil or before >= ttl) then ttl = before end
      before = -1
    end
    if missing or ARGV[14] == 'respec' then
      for i = 16, #ARGV do args[#args + 1] = ARGV[i] end
    end
    redis.call('HSET', KEYS[1], unpack(args))
    expire(KEYS[1], before)
  else
    for i, v in ipairs({ ARGV[7], ts }) do
      local before = redis.call('PTTL', KEYS[i])
      redis.call('SET', KEYS[i], v, 'KEEPTTL')
      expire(KEYS[i], before)
    end
  end
  return missing and 2 or 1
end

-- Whether digit strings a < b as numbers (beyond a double's precision).
local function digits_lt(a, b) return #a < #b or (#a == #b and a < b) end

if kind == 'gcra' then
  -- The key must hold one number of the library's form with a TTL the library sets.
  if #KEYS ~= 1 then return redis.error_reply('ERR bucketctl: a gcra bucket is one key') end
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t == 'none' then
    if mode == 'delete' then return 0 end
  elseif t ~= 'string' or redis.call('STRLEN', KEYS[1]) > 64 then
    return -1
  elseif not declared then
    return -3
  else
    local v = redis.call('GET', KEYS[1])
    local form
    if ARGV[9] == '1' then
      local n = num(v)
      form = n ~= nil and n >= tonumber(ARGV[3]) and n < tonumber(ARGV[12])
    else
      form = string.find(v, '^[1-9]%d*$') ~= nil and not digits_lt(v, ARGV[3]) and digits_lt(v, ARGV[12])
    end
    if not form then return -1 end
    local pttl, per = redis.call('PTTL', KEYS[1]), unit_us[ARGV[8]]
    if pttl < 0 or per == nil then return -1 end
    local ahead, ttl = tonumber(ARGV[4]) * 1000000 + tonumber(v) * per - now_us(), pttl * 1000
    if not (ahead > ttl - tonumber(ARGV[5]) and ahead <= ttl + tonumber(ARGV[6])) then return -1 end
  end
  if mode == 'delete' then
    redis.call('DEL', KEYS[1])
    return 1
  end
  redis.call('SET', KEYS[1], ARGV[7], 'PX', ARGV[10])
  return t == 'none' and 2 or 1
end

-- A digit string plus one, exactly.
local function incr(d)
  local i = #d
  while i > 0 and string.sub(d, i, i) == '9' do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #d) end
  return string.sub(d, 1, i - 1) .. string.char(string.byte(d, i) + 1) .. string.rep('0', #d - i)
end

if kind == 'json' then
  -- Set writes Last max(now, stored) in ns, delete the owner's zero state; both version + 1.
  if #KEYS ~= 1 then return redis.error_reply('ERR bucketctl: a json bucket is one key') end
  local t = redis.call('TYPE', KEYS[1])['ok']
  local last, avail, ver
  if t == 'none' then
    if mode == 'delete' then return 0 end
  elseif t ~= 'string' or redis.call('STRLEN', KEYS[1]) > 128 then
    return -1
  else
    -- The owner's form (bucket/mennanov_state.go parseJSONState): canonical digits.
    last, avail, ver = string.match(redis.call('GET', KEYS[1]), '^{"state":{"Last":(%d+),"Available":(%d+)},"version":(%d+)}$')
    if not last then return -1 end
    for _, d in ipairs({ last, avail, ver }) do
      if #d > 1 and string.sub(d, 1, 1) == '0' then return -1 end
    end
    if #last > 19 or (#last == 19 and not digits_lt(last, '9223372036854775808')) then return -1 end
    if not declared then return -3 end
    if #ver > 18 or tonumber(avail) > MAX_TOKENS then return -2 end
  end
  local v = '1'
  if ver then v = incr(ver) end
  if mode == 'delete' then
    redis.call('SET', KEYS[1], '{"state":{"Last":0,"Available":0},"version":' .. v .. '}', 'KEEPTTL')
    return 1
  end
  if string.find(ARGV[7], '^[1-9]%d*$') == nil and ARGV[7] ~= '0' then
    return redis.error_reply('ERR bucketctl: tokens must be a whole number')
  end
  local ns = string.format('%d', now_us()) .. '000'
  if last and ARGV[12] ~= '0' and digits_lt(ns, last) then ns = last end
  local before = redis.call('PTTL', KEYS[1])
  redis.call('SET', KEYS[1], '{"state":{"Last":' .. ns .. ',"Available":' .. ARGV[7] .. '},"version":' .. v .. '}', 'KEEPTTL')
  local ttl = tonumber(ARGV[10])
  if ttl ~= nil and (t == 'none' or before < ttl) then redis.call('PEXPIRE', KEYS[1], ttl) end
  return t == 'none' and 2 or 1
end

-- mennanov-keys: as json over the two-key form's available and last, and its version KEYS[3].
local vals, missing = {}, true
for i = 1, 2 do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'none' then
    missing = false
    if t ~= 'string' or redis.call('STRLEN', KEYS[i]) > 19 then return -1 end
    local v = redis.call('GET', KEYS[i])
    if string.find(v, '^[1-9]%d*$') == nil and v ~= '0' then return -1 end
    vals[i] = v
  end
end
if missing then
  if mode == 'delete' then return 0 end
elseif not declared then
  return -3
end
local avail, last = '0', '0' -- delete: the owner's own Reset, read as full
if mode == 'set' then
  avail, last = ARGV[7], string.format('%d', now_us()) .. '000'
  if vals[2] and ARGV[12] ~= '0' and digits_lt(last, vals[2]) then last = vals[2] end
end
-- An incremented version fails the check of a decision read before; a set writes one.
local vt = KEYS[3] and redis.call('TYPE', KEYS[3])['ok']
if vt == 'string' and string.find(redis.call('GET', KEYS[3]), '^%d+$') or vt == 'none' and mode == 'set' then
  redis.call('INCR', KEYS[3])
end
local ttl = tonumber(ARGV[10])
for i, v in ipairs({ avail, last }) do
  local before = redis.call('PTTL', KEYS[i])
  redis.call('SET', KEYS[i], v, 'KEEPTTL')
  if mode == 'set' and ttl ~= nil and (before < 0 or before < ttl) then redis.call('PEXPIRE', KEYS[i], ttl) end
end
if vt and mode == 'set' and ttl ~= nil then
  local before = redis.call('PTTL', KEYS[3])
  if before > 0 and before < ttl or vt == 'none' then redis.call('PEXPIRE', KEYS[3], ttl) end
end
return missing and 2 or 1
