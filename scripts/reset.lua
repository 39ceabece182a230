-- bucketctl reset: compare-and-delete or compare-and-set one bucket of any layout.
-- The keys are changed only if they still have the whole shape of a bucket of the planned
-- layout, checked in this same script (bucket/shape.go states the rule): a key that holds
-- anything else now, such as application data written since the bucket was listed, is left
-- exactly as it is and reported (-1).
--
-- KEYS[1]  the bucket key (the tokens key of a two-key layout); KEYS[2] its time key
-- ARGV[1]  "delete" or "set"
-- ARGV[2]  layout type: "tagged" (the native layout's string, or a native-hash bucket, which a set
--          converts), "hash", "strings", "gcra" or "json"
-- ARGV[3]  tokens field, ARGV[4] time field (hash layouts)
-- ARGV[5]  the layout's other required fields, comma-separated ("capacity,rate" or "")
-- ARGV[6]  the fields it may hold besides, comma-separated ("allowed,denied" or "")
-- ARGV[7]  tokens to write (string)
-- ARGV[8]  time unit: "s", "ms", "us" or "ns"; ARGV[9] "1" when the time is written as a float
-- ARGV[10] TTL in milliseconds at least, or "" to keep the key's TTL (see the end)
-- ARGV[11] now in microseconds, or "" for Redis TIME
-- ARGV[12] "1" to keep a stored time later than now, "0" to write now (a layout whose
--          application refills negatively from a time ahead of its clock)
-- ARGV[13] the capacity declared with the key's layout (a rule or --layout; "0" when its
--          spec is unknown), else "": a lone bare number (a gcra TAT, a two-key level
--          without its time key) is a bucket only where a layout is declared, since
--          deadlines, leases and counters are bare numbers too, and a lone level only within
--          the declared capacity (a lease or a large counter never is); for a two-key
--          layout ",LO,HI" follows: the PTTL in ms a lone level must have (-1,-1: none, as
--          its owner sets none; a counter with a TTL of its window is not a level)
-- ARGV[14] "respec": write the spec pairs below into an existing native bucket too (a reset
--          that changes the stored spec on purpose); "": only into a bucket it creates
-- ARGV[15] "time-first": the owner reads the hash by position, so a write leaves a hash of
--          the time field then the tokens field, in that order (Traefik); "": any order
-- ARGV[16..] field/value pairs of the native spec (capacity, rate)
-- tagged: ARGV[7] the tokens, ARGV[10] the TTL grace in milliseconds ("" = 60000; the TTL is
--       the refill to full plus it), ARGV[11], ARGV[12], ARGV[14] as above, ARGV[15..18]
--       "capacity", C, "rate", R (the spec of a bucket created or respecced).
-- json: ARGV[7] the whole tokens to write, ARGV[10], ARGV[11], ARGV[12] as above. The key must
--       still hold its owner's state; set writes Last max(now, stored) in ns, delete the
--       owner's zero state (full), both with the version plus one and the key's TTL kept
--       (set: at least ARGV[10]).
-- mennanov-keys: as json over KEYS[1] and KEYS[2], the two-key form's available and last,
--       and KEYS[3] (if given) its version counter, incremented where it exists (set: created).
-- gcra: ARGV[3] the lowest stored number of the library's form and ARGV[12] the first
--       beyond it (decimal), ARGV[4] the layout's epoch in Unix seconds, ARGV[5] and
--       ARGV[6] the TTL bounds below and above in microseconds, ARGV[7] the TAT to SET,
--       ARGV[8] its unit and ARGV[9] "1" for a float (else a canonical integer), ARGV[10]
--       its TTL in milliseconds, ARGV[11] now as above. The key must still be a string
--       holding one number of that form (bucket/gcra_forms.go) with a TTL the library could
--       have set for it: TAT − now in (PTTL − ARGV[5], PTTL + ARGV[6]] (bucket/gcra_read.go
--       gcraTTLBounds). Anything else, a counter without a TTL above all, is left untouched.
-- Reply: 1 reset, 2 created (set on a missing bucket), 0 nothing to delete (no key),
--        -1 not a bucket of that layout, -2 a bucket whose stored values are corrupt
--        (overflowing or out of range), -3 another application's bucket with no layout
--        declared for it: each left untouched.
-- The number grammar, ranges and the native identity are the prelude's (number.lua).

local num, native, refusal, tagged, ttl_ms, checked, clock, struct =
  prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S)

-- (An absent ARGV[13], a caller of the script's own, declares nothing.)
local declared = ARGV[13] ~= nil and ARGV[13] ~= ''
local lone_cap, lone_lo, lone_hi = string.match(ARGV[13] or '', '^([^,]*),?(-?%d*),?(-?%d*)$')
local lone_max = num(lone_cap)

-- now in microseconds: ARGV[11] (a client clock, checked as every script checks its clock,
-- the prelude's clock()) or Redis TIME.
local given_now, why = clock(ARGV[11])
if given_now == false then return redis.error_reply(why) end
local function now_us()
  if given_now then return given_now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function split(s)
  local out = {}
  for f in string.gmatch(s, '[^,]+') do out[#out + 1] = f end
  return out
end

local per = { s = 1000000, ms = 1000, us = 1, ns = 0.001 }

-- Whether digit strings a < b as numbers (beyond a double's precision).
local function digits_lt(a, b) return #a < #b or (#a == #b and a < b) end

-- A TAT in the library's form: a float a number of the one grammar (the prelude's num), an
-- integer canonical digits; either in [ARGV[3], ARGV[12]) (bucket/gcra_forms.go parse).
local function gcra_tat(v)
  if type(v) ~= 'string' then return false end
  if ARGV[9] == '1' then
    local n = num(v)
    return n ~= nil and n >= tonumber(ARGV[3]) and n < tonumber(ARGV[12])
  end
  return string.find(v, '^[1-9]%d*$') ~= nil and not digits_lt(v, ARGV[3]) and digits_lt(v, ARGV[12])
end

-- Whether the TAT v (in the library's form) fits the key's TTL the way the library sets it:
-- the libraries always set a TTL, and tie it to the TAT.
local function gcra_ttl_fits(v)
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < 0 or per[ARGV[8]] == nil then return false end
  local tat = tonumber(ARGV[4]) * 1000000 + tonumber(v) * per[ARGV[8]]
  local ahead, ttl = tat - now_us(), pttl * 1000
  return ahead > ttl - tonumber(ARGV[5]) and ahead <= ttl + tonumber(ARGV[6])
end

-- A json layout's state as its owner writes it (bucket/mennanov_state.go parseJSONState):
-- Last, Available and version as digit strings, or nil.
local function json_state(v)
  local last, avail, ver = string.match(v, '^{"state":{"Last":(%d+),"Available":(%d+)},"version":(%d+)}$')
  for _, d in ipairs({ last or '', avail or '', ver or '' }) do
    if d == '' or (#d > 1 and string.sub(d, 1, 1) == '0') then return nil end
  end
  if #last > 19 or (#last == 19 and not digits_lt(last, '9223372036854775808')) then return nil end
  return last, avail, ver
end

-- A digit string plus one, exactly.
local function incr(d)
  local i = #d
  while i > 0 and string.sub(d, i, i) == '9' do i = i - 1 end
  if i == 0 then return '1' .. string.rep('0', #d) end
  return string.sub(d, 1, i - 1) .. string.char(string.byte(d, i) + 1) .. string.rep('0', #d - i)
end

if ARGV[2] == 'gcra' then
  if #KEYS ~= 1 then return redis.error_reply('ERR bucketctl: a gcra bucket is one key') end
  local t = redis.call('TYPE', KEYS[1])['ok']
  if t == 'none' then
    if ARGV[1] == 'delete' then return 0 end
  elseif t ~= 'string' or redis.call('STRLEN', KEYS[1]) > 64 then
    return -1
  elseif not declared then
    return -3
  else
    local v = redis.call('GET', KEYS[1])
    if not gcra_tat(v) or not gcra_ttl_fits(v) then return -1 end
  end
  if ARGV[1] == 'delete' then
    redis.call('DEL', KEYS[1])
    return 1
  end
  redis.call('SET', KEYS[1], ARGV[7], 'PX', ARGV[10])
  if t == 'none' then return 2 end
  return 1
end

if ARGV[2] == 'json' then
  if #KEYS ~= 1 then return redis.error_reply('ERR bucketctl: a json bucket is one key') end
  local t = redis.call('TYPE', KEYS[1])['ok']
  local last, avail, ver
  if t == 'none' then
    if ARGV[1] == 'delete' then return 0 end
  elseif t ~= 'string' or redis.call('STRLEN', KEYS[1]) > 128 then
    return -1
  else
    last, avail, ver = json_state(redis.call('GET', KEYS[1]))
    if not last then return -1 end
    if not declared then return -3 end
    if #ver > 18 or tonumber(avail) > MAX_TOKENS then return -2 end
  end
  local v = '1'
  if ver then v = incr(ver) end
  if ARGV[1] == 'delete' then -- the owner's own Reset: the zero state, read as full
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
  if t == 'none' then return 2 end
  return 1
end

if ARGV[2] == 'mennanov-keys' then
  -- KEYS: available, last, and version where named so: canonical integers.
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
    if ARGV[1] == 'delete' then return 0 end
  elseif not declared then
    return -3
  end
  local avail, last = '0', '0' -- delete: the owner's own Reset, read as full
  if ARGV[1] == 'set' then
    avail, last = ARGV[7], string.format('%d', now_us()) .. '000'
    if vals[2] and ARGV[12] ~= '0' and digits_lt(last, vals[2]) then last = vals[2] end
  end
  -- A race-checking owner counts its writes in KEYS[3]: incremented, a decision read before
  -- fails its check; and it reads no state without it, so a set writes one.
  local vt = KEYS[3] and redis.call('TYPE', KEYS[3])['ok']
  if vt == 'string' and string.find(redis.call('GET', KEYS[3]), '^%d+$') or vt == 'none' and ARGV[1] == 'set' then
    redis.call('INCR', KEYS[3])
  end
  local ttl = tonumber(ARGV[10])
  for i, v in ipairs({ avail, last }) do
    local before = redis.call('PTTL', KEYS[i])
    redis.call('SET', KEYS[i], v, 'KEEPTTL')
    if ARGV[1] == 'set' and ttl ~= nil and (before < 0 or before < ttl) then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
  if vt and ARGV[1] == 'set' and ttl ~= nil then
    local before = redis.call('PTTL', KEYS[3])
    if before > 0 and before < ttl or vt == 'none' then redis.call('PEXPIRE', KEYS[3], ttl) end
  end
  if missing then return 2 end
  return 1
end

if ARGV[2] == 'tagged' then
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
  if t ~= 'none' and not s_tokens then
    if s_ts == 'corrupt' then return -2 end
    return -1
  end
  if ARGV[1] == 'delete' then
    if t == 'none' then return 0 end
    redis.call('DEL', KEYS[1])
    return 1
  end
  -- set: the given tokens at max(now, stored ts), the stored spec (the given one when the
  -- bucket is created or ARGV[14] is "respec") and counters, value and TTL in one SET PX.
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
  -- The TTL covers the refill and the grace, and a longer one the key had is kept.
  local ttl = ttl_ms(cap, tokens, rate, grace)
  if t ~= 'none' then ttl = math.max(ttl, redis.call('PTTL', KEYS[1])) end
  redis.call('SET', KEYS[1], struct.pack('<c13BddI7I7ddI4', TAG, 0, tokens, ts, allowed, denied, cap, rate, 0), 'PX', ttl)
  if t == 'none' then return 2 end
  return 1
end

local hash = ARGV[2] == 'hash'
local types = {}
local missing = true
for i = 1, #KEYS do
  types[i] = redis.call('TYPE', KEYS[i])['ok']
  if types[i] ~= 'none' then missing = false end
end

local div = per[ARGV[8]]
if div == nil then return redis.error_reply('ERR bucketctl: unknown time unit ' .. tostring(ARGV[8])) end

-- A stored level and time in range (the prelude's ranges), else corrupt.
local function in_range(tokens, t)
  return tokens >= 0 and tokens <= MAX_TOKENS and t >= 0 and t * div <= MAX_TIME_US
end

-- The stored time when the keys are a bucket of the layout; else false and the reply
-- (-1 not a bucket, -2 corrupt, -3 a bare number without a declared layout).
local function stored_time()
  if hash then
    if types[1] ~= 'hash' or redis.call('HLEN', KEYS[1]) > 6 then return false, -1 end
    if ARGV[5] == 'capacity,rate' then -- the native layout
      local tokens, ts = native(redis.call('HGETALL', KEYS[1]))
      if tokens == nil then
        if ts == 'corrupt' then return false, -2 end
        return false, -1
      end
      return ts
    end
    if not declared then return false, -3 end
    local flat = redis.call('HGETALL', KEYS[1])
    local got, over = {}, false
    for i = 1, #flat, 2 do
      local v, o = num(flat[i + 1])
      if v == nil and not o then return false, -1 end
      over = over or o ~= nil
      got[flat[i]] = flat[i + 1]
    end
    local tok, t = got[ARGV[3]], got[ARGV[4]]
    local required = split(ARGV[5])
    required[#required + 1] = ARGV[3]
    required[#required + 1] = ARGV[4]
    for _, f in ipairs(required) do
      if got[f] == nil then return false, -1 end
      got[f] = nil
    end
    for _, f in ipairs(split(ARGV[6])) do got[f] = nil end
    if next(got) ~= nil then return false, -1 end
    if over or not in_range(num(tok), num(t)) then return false, -2 end
    return num(t)
  end
  -- Two keys: the level and its time key, both numbers; a lone level only where declared.
  local vals = {}
  for i = 1, #KEYS do
    if types[i] == 'none' and i > 1 and types[1] ~= 'none' then
      if not declared then return false, -3 end
    elseif types[i] ~= 'string' or redis.call('STRLEN', KEYS[i]) > 64 then
      return false, -1
    else
      local v, o = num(redis.call('GET', KEYS[i]))
      if v == nil then
        if o then return false, -2 end
        return false, -1
      end
      vals[i] = v
    end
  end
  if not declared then return false, -3 end
  if vals[2] == nil then -- a declared lone level: its application reads the time as now
    if not lone_max or lone_max <= 0 or vals[1] < 0 or vals[1] > lone_max then return false, -1 end
    if lone_lo ~= nil and lone_lo ~= '' then
      local pttl = redis.call('PTTL', KEYS[1])
      if pttl < tonumber(lone_lo) or pttl > tonumber(lone_hi) then return false, -1 end
    end
    if not in_range(vals[1], 0) then return false, -2 end
    return nil
  end
  if not in_range(vals[1], vals[2]) then return false, -2 end
  return vals[2]
end

local stored = false
if not missing then
  local why
  stored, why = stored_time()
  if stored == false then return why end
end

if ARGV[1] == 'delete' then
  if missing then return 0 end
  redis.call('DEL', unpack(KEYS))
  return 1
end

local now = now_us()
-- Time never moves backwards: a bucket written by a client whose clock runs ahead keeps
-- its later time, which the application's max(now, ts) would keep too (unless ARGV[12]).
local t = now / div
if ARGV[9] ~= '1' then t = math.floor(t) end
if stored and stored > t and ARGV[12] ~= '0' then t = stored end
local ts
if ARGV[9] == '1' and div ~= 1 then ts = string.format('%.6f', t) else ts = string.format('%d', t) end

-- The TTL: at least ARGV[10] (what the owning application sets, or the refill to full; an
-- expiry after that is lossless, a missing bucket being full), and never shorter than the
-- TTL the key had: a longer one is kept.
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
if missing then return 2 end
return 1
