-- bucketctl's shared prelude: every script of bucketctl's that reads stored numbers starts with
-- this text (scripts.go assembles them), so the number grammar and the native bucket's ranges
-- are written once on the Lua side. Their Go side: bucket/number.go ParseNumber and
-- bucket/classify.go; a table test runs both on the same strings against a real server.

-- The ranges of a stored bucket (bucket: maxTokens, maxTime, maxCounter, maxRefill).
local MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S = 1e15, 1e17, 9007199254740992, 3153600000

-- num(v): the number v holds by the one grammar, or nil. Grammar: optional sign, digits,
-- optional fraction, optional exponent, at most 64 bytes, finite; no spaces, hex, inf, nan.
-- The byte class leaves tonumber nothing but the grammar (Lua's strtod then refuses a
-- malformed rest); a value of that form that overflows gives nil, 'overflow' (corrupt).
-- Cost: a Redis script runs its whole text on every call, so these functions are made anew
-- each time, and every local they capture costs an upvalue made and closed per call (about
-- 50 ns each, more than a global lookup): they look the library functions up as globals and
-- capture only the class and the ranges. The class is tested anchored, '^[...]*$': one pass
-- over the bytes, where the unanchored search for a byte outside it restarts at every byte.
local NUM_BYTES = '^[0-9eE%.%+%-]*$'
local function num(v)
  if type(v) ~= 'string' or #v == 0 or #v > 64 or not string.find(v, NUM_BYTES) then return nil end
  local n = tonumber(v)
  if n == nil or n ~= n then return nil end
  if n - n ~= 0 then return nil, 'overflow' end -- +-inf (NaN is refused above)
  return n
end

-- native(st, hlen): the verdict on a native bucket read as
-- HMGET key tokens ts capacity rate allowed denied, with HLEN key. Returns tokens, ts,
-- capacity, rate, allowed, denied (a missing counter is 0); or nil, kind, why, where kind is
-- 'shape' (not a native bucket: a field missing, others besides, a value not a number) or
-- 'corrupt' (a native bucket whose stored value overflows or is out of range).
-- The common path allocates one string (the fields joined); messages are built on the
-- refusing paths only.
local function native(st, hlen)
  local v1, v2, v3, v4, v5, v6 = st[1], st[2], st[3], st[4], st[5], st[6]
  if not (v1 and v2 and v3 and v4) then return nil, 'shape', 'a field of a native bucket is missing' end
  local n = 4
  if v5 then n = n + 1 end
  if v6 then n = n + 1 end
  if hlen ~= n then return nil, 'shape', 'the hash holds other fields too' end
  -- The common path: every present field's length, then the byte class of the grammar in
  -- one pass over the fields joined (each field's bytes are in the class exactly when the
  -- joined bytes are), then tonumber on each as num() does. Anything else (a value out of
  -- the grammar, an overflow) takes the per-field path below, which names the first bad one.
  local l1, l2, l3, l4, l5, l6 = #v1, #v2, #v3, #v4, v5 and #v5 or 1, v6 and #v6 or 1
  if l1 > 0 and l1 <= 64 and l2 > 0 and l2 <= 64 and l3 > 0 and l3 <= 64 and l4 > 0 and l4 <= 64
    and l5 > 0 and l5 <= 64 and l6 > 0 and l6 <= 64
    and string.find(v1 .. v2 .. v3 .. v4 .. (v5 or '') .. (v6 or ''), NUM_BYTES) then
    local tonum = tonumber
    local t, ts, c, r, a, d = tonum(v1), tonum(v2), tonum(v3), tonum(v4), 0, 0
    if v5 then a = tonum(v5) end
    if v6 then d = tonum(v6) end
    if t and ts and c and r and a and d
      and t == t and ts == ts and c == c and r == r and a == a and d == d
      and t >= 0 and t <= MAX_TOKENS and ts >= 0 and ts <= MAX_TIME_US
      and c > 0 and c <= MAX_TOKENS and r > 0 and c / r <= MAX_REFILL_S
      and a >= 0 and a <= MAX_COUNTER and d >= 0 and d <= MAX_COUNTER then
      return t, ts, c, r, a, d
    end
  end
  -- Each present field by the grammar, in the fields' order (the first bad one is named).
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
    if over then return nil, 'corrupt', name .. ' ' .. st[i] .. ' overflows a float' end
    return nil, 'shape', 'field ' .. name .. ' is not a number'
  end
  if t < 0 or t > MAX_TOKENS then return nil, 'corrupt', 'tokens ' .. v1 .. ' is out of range' end
  if ts < 0 or ts > MAX_TIME_US then return nil, 'corrupt', 'ts ' .. v2 .. ' is not a time' end
  if c <= 0 or c > MAX_TOKENS then return nil, 'corrupt', 'capacity ' .. v3 .. ' is out of range' end
  if r <= 0 or c / r > MAX_REFILL_S then return nil, 'corrupt', 'rate ' .. v4 .. ' is out of range' end
  if a < 0 or a > MAX_COUNTER then return nil, 'corrupt', 'allowed ' .. v5 .. ' is out of range' end
  if d < 0 or d > MAX_COUNTER then return nil, 'corrupt', 'denied ' .. v6 .. ' is out of range' end
  return t, ts, c, r, a, d
end
