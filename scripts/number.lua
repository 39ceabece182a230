-- The prelude: the number grammar (bucket/number.go) and the native bucket (bucket/native.go).
-- prelude() makes the functions only where a script needs them: closures cost every call.
local TAG, TAG_LEN, NATIVE_LEN = 'bucketctl:v1:', 13, 64
local MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S = 1e15, 1e17, 9007199254740992, 3153600000

local function prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S)
  -- num(v): the number v holds by the grammar (at most 64 bytes, finite), or nil; nil,
  -- 'overflow' for one too large. The anchored byte class leaves tonumber only the grammar.
  local function num(v)
    if type(v) ~= 'string' or #v == 0 or #v > 64 or not string.find(v, '^[0-9eE%.%+%-]*$') then return nil end
    local n = tonumber(v)
    if n == nil or n ~= n then return nil end
    if n - n ~= 0 then return nil, 'overflow' end -- +-inf (NaN is refused above)
    return n
  end

  -- native(h): a native-hash bucket read by HGETALL: tokens, ts, capacity, rate, allowed,
  -- denied, and capacity and rate as stored; or nil, kind ('shape', 'none', 'layout',
  -- 'corrupt'), why.
  local function native(h)
    local n, v1, v2, v3, v4, v5, v6 = #h
    if h[1] == 'tokens' and h[3] == 'ts' and h[7] == 'capacity' and h[9] == 'rate' and (n == 10 or n == 12) then
      local f5, f11 = h[5], h[11]
      if f5 == 'allowed' and (f11 == 'denied' or n == 10) then
        v1, v2, v3, v4, v5, v6 = h[2], h[4], h[8], h[10], h[6], h[12]
      elseif f5 == 'denied' and (f11 == 'allowed' or n == 10) then
        v1, v2, v3, v4, v5, v6 = h[2], h[4], h[8], h[10], h[12], h[6]
      end
    end
    if v1 == nil then -- any order: each field once, none besides
      local others = false
      for i = 1, n, 2 do
        local f = h[i]
        if f == 'tokens' then v1 = h[i + 1] elseif f == 'ts' then v2 = h[i + 1]
        elseif f == 'capacity' then v3 = h[i + 1] elseif f == 'rate' then v4 = h[i + 1]
        elseif f == 'allowed' then v5 = h[i + 1] elseif f == 'denied' then v6 = h[i + 1]
        else others = true end
      end
      if not (v1 or v2 or v3 or v4 or v5 or v6) then return nil, 'none', 'no field of a bucket' end
      if v1 and not v3 then return nil, 'layout', 'no capacity field' end
      if not (v1 and v2 and v3 and v4) then return nil, 'shape', 'a field of a native bucket is missing' end
      if others then return nil, 'shape', 'the hash holds other fields too' end
    end
    -- The common path: plain decimals, which arithmetic converts, never negative, NaN or inf.
    local j = v1 .. ' ' .. v2 .. ' ' .. v3 .. ' ' .. v4 .. ' ' .. (v5 or '0') .. ' ' .. (v6 or '0')
    if #j <= 64 and string.find(j, '^%d[%d.]* %d[%d.]* %d[%d.]* %d[%d.]* %d[%d.]* %d[%d.]*$')
      and not string.find(j, '%.%d*%.') then
      local t, ts, c, r, a, d = v1 + 0, v2 + 0, v3 + 0, v4 + 0, 0, 0
      if v5 then a = v5 + 0 end
      if v6 then d = v6 + 0 end
      if t <= MAX_TOKENS and ts <= MAX_TIME_US and c > 0 and c <= MAX_TOKENS and r > 0
        and c / r <= MAX_REFILL_S and a <= MAX_COUNTER and d <= MAX_COUNTER then
        return t, ts, c, r, a, d, v3, v4
      end
    end
    -- Else each by num, naming the first bad value.
    local t, o1 = num(v1)
    local ts, o2, c, o3, r, o4, a, o5, d, o6
    if t then ts, o2 = num(v2) end
    if ts then c, o3 = num(v3) end
    if c then r, o4 = num(v4) end
    if r then
      a, d = 0, 0
      if v5 then a, o5 = num(v5) end
      if a and v6 then d, o6 = num(v6) end
    end
    if not (t and ts and c and r and a and d) then
      local i, over = 6, o6
      if not t then i, over = 1, o1 elseif not ts then i, over = 2, o2 elseif not c then i, over = 3, o3
      elseif not r then i, over = 4, o4 elseif not a then i, over = 5, o5 end
      local name = ({ 'tokens', 'ts', 'capacity', 'rate', 'allowed', 'denied' })[i]
      if over then return nil, 'corrupt', name .. ' ' .. ({ v1, v2, v3, v4, v5, v6 })[i] .. ' overflows a float' end
      return nil, 'shape', 'field ' .. name .. ' is not a number'
    end
    if t < 0 or t > MAX_TOKENS then return nil, 'corrupt', 'tokens ' .. v1 .. ' is out of range' end
    if ts < 0 or ts > MAX_TIME_US then return nil, 'corrupt', 'ts ' .. v2 .. ' is not a time' end
    if c <= 0 or c > MAX_TOKENS then return nil, 'corrupt', 'capacity ' .. v3 .. ' is out of range' end
    if r <= 0 or c / r > MAX_REFILL_S then return nil, 'corrupt', 'rate ' .. v4 .. ' is out of range' end
    if a < 0 or a > MAX_COUNTER then return nil, 'corrupt', 'allowed ' .. v5 .. ' is out of range' end
    if d < 0 or d > MAX_COUNTER then return nil, 'corrupt', 'denied ' .. v6 .. ' is out of range' end
    return t, ts, c, r, a, d, v3, v4
  end

  -- refusal(kind, why): the error reply's text for a verdict; bucket/errors.go reads it.
  local function refusal(kind, why)
    if kind == 'corrupt' then return 'ERR bucketctl: corrupt bucket: ' .. why .. ': left untouched' end
    if kind == 'none' then return 'WRONGTYPE bucketctl: the key exists but is not a token bucket' end
    if kind == 'layout' then
      return 'ERR bucketctl: not a native bucket (no capacity field): another layout, use inspect/reset with --layout'
    end
    return 'ERR bucketctl: not a native bucket (' .. why .. '): left untouched'
  end

  -- struct is Redis's; without it (the demo's miniredis), the scripts' formats in plain Lua.
  local struct = rawget(_G, 'struct') or (function()
    local floor, char, byte = math.floor, string.char, string.byte
    local function items(f)
      local out = {}
      for o, n in string.gmatch(f, '([cBxId])(%d*)') do
        local size = tonumber(n)
        if o == 'B' or o == 'x' then size = 1 elseif o == 'd' then size = 8 end
        out[#out + 1] = { o, size }
      end
      return out
    end
    local function le(x, size) -- an unsigned integer's bytes
      local b = {}
      for i = 1, size do b[i] = char(x % 256); x = floor(x / 256) end
      return table.concat(b)
    end
    local function double(x)
      local sign, mant, expo = 0, 0, 0
      if x < 0 or (x == 0 and 1 / x < 0) then sign, x = 1, -x end
      if x ~= x then mant, expo = 2 ^ 51, 2047
      elseif x == math.huge then expo = 2047
      elseif x > 0 then
        local m, e = math.frexp(x)
        if e + 1022 >= 1 then mant, expo = (m * 2 - 1) * 2 ^ 52, e + 1022 else mant = math.ldexp(m, e + 1074) end
      end
      return le(mant % 2 ^ 32, 4) .. le(sign * 2 ^ 31 + expo * 2 ^ 20 + floor(mant / 2 ^ 32), 4)
    end
    local function uint(v, at, size)
      local x = 0
      for i = at + size - 1, at, -1 do x = x * 256 + byte(v, i) end
      return x
    end
    return {
      pack = function(f, ...)
        local args, out, j = { ... }, {}, 0
        for i, it in ipairs(items(f)) do
          local o = it[1]
          if o == 'x' then out[i] = '\0' else
            j = j + 1
            local x = args[j]
            if o == 'c' then out[i] = string.sub(x, 1, it[2])
            elseif o == 'd' then out[i] = double(x)
            else out[i] = le(x, it[2]) end
          end
        end
        return table.concat(out)
      end,
      unpack = function(f, v, at)
        local out = {}
        at = at or 1
        for _, it in ipairs(items(f)) do
          local o, size, i = it[1], it[2], #out + 1
          if o == 'x' then i = nil
          elseif o == 'c' then out[i] = string.sub(v, at, at + size - 1)
          elseif o == 'd' then
            local lo, hi = uint(v, at, 4), uint(v, at + 4, 4)
            local sign = 1
            if hi >= 2 ^ 31 then sign, hi = -1, hi - 2 ^ 31 end
            local expo, mant = floor(hi / 2 ^ 20), (hi % 2 ^ 20) * 2 ^ 32 + lo
            if expo == 2047 then
              if mant == 0 then out[i] = sign * math.huge else out[i] = 0 / 0 end
            elseif expo == 0 then out[i] = sign * math.ldexp(mant, -1074)
            else out[i] = sign * math.ldexp(mant + 2 ^ 52, expo - 1075) end
          else out[i] = uint(v, at, size) end
          at = at + size
        end
        out[#out + 1] = at
        return unpack(out)
      end,
    }
  end)()

  -- tagged(v): native()'s verdict for a string read by GET, with expires after denied.
  local function tagged(v)
    if string.sub(v, 1, TAG_LEN) ~= TAG then return nil, 'none', 'a string without the tag' end
    if #v ~= NATIVE_LEN then
      return nil, 'corrupt', 'the value after the tag is ' .. (#v - TAG_LEN) .. ' bytes, not ' .. (NATIVE_LEN - TAG_LEN)
    end
    local _, _, t, ts, a, d, c, r, e = struct.unpack('<c13BddI7I7ddI4', v)
    local g = '%.17g'
    if not (t >= 0 and t <= MAX_TOKENS) then return nil, 'corrupt', 'tokens ' .. string.format(g, t) .. ' is out of range' end
    if not (ts >= 0 and ts <= MAX_TIME_US) then return nil, 'corrupt', 'ts ' .. string.format(g, ts) .. ' is not a time' end
    if not (c > 0 and c <= MAX_TOKENS) then return nil, 'corrupt', 'capacity ' .. string.format(g, c) .. ' is out of range' end
    if not (r > 0 and r - r == 0 and c / r <= MAX_REFILL_S) then
      return nil, 'corrupt', 'rate ' .. string.format(g, r) .. ' is out of range'
    end
    if a > MAX_COUNTER then return nil, 'corrupt', 'allowed ' .. string.format(g, a) .. ' is out of range' end
    if d > MAX_COUNTER then return nil, 'corrupt', 'denied ' .. string.format(g, d) .. ' is out of range' end
    return t, ts, c, r, a, d, e
  end

  local function ttl_ms(capacity, tokens, rate, grace)
    return math.max(1, math.ceil(((capacity - tokens) / rate) * 1000) + grace)
  end

  -- checked(cap_s, rate_s, cost_s): the arguments as numbers within a stored bucket's ranges,
  -- or false and the error reply's text; cap_s nil checks the cost alone.
  local function checked(cap_s, rate_s, cost_s)
    local capacity, rate, cost = nil, nil, 1
    if cap_s then
      capacity, rate = num(cap_s), num(rate_s)
      if not capacity or capacity <= 0 or capacity > MAX_TOKENS then
        return false, 'ERR bucketctl: capacity must be a positive finite number of at most 1e15'
      end
      if not rate or rate <= 0 then return false, 'ERR bucketctl: rate must be a positive finite number' end
      if capacity / rate > MAX_REFILL_S then
        return false, 'ERR bucketctl: capacity/rate must refill within 100 years'
      end
    end
    if cost_s ~= '1' then
      cost = num(cost_s)
      if not cost or cost < 0 then return false, 'ERR bucketctl: cost must be a finite number >= 0' end
    end
    return capacity, rate, cost
  end

  -- clock(now_s, grace_s): the time in µs (nil: Redis TIME) and the grace in whole ms
  -- (default 60000), or false and the error reply's text.
  local function clock(now_s, grace_s)
    local now, grace = nil, 60000
    if now_s and now_s ~= '' then
      now = num(now_s)
      if not now or now < 0 or now > MAX_TIME_US then
        return false, 'ERR bucketctl: now must be microseconds since 1970 (0 to 1e17)'
      end
    end
    if grace_s and grace_s ~= '' then
      grace = num(grace_s)
      if not grace or grace < 0 or grace > MAX_REFILL_S * 1000 or grace % 1 ~= 0 then
        return false, 'ERR bucketctl: the TTL grace must be whole milliseconds, 0 to 100 years'
      end
    end
    return now, grace
  end

  return num, native, refusal, tagged, ttl_ms, checked, clock, struct
end
