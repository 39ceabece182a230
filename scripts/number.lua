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
-- (The library functions are locals: a global lookup on every call of a hot path costs.)
local find, tonum, strtype, HUGE = string.find, tonumber, type, math.huge
local function num(v)
  if strtype(v) ~= 'string' or #v == 0 or #v > 64 or find(v, '[^0-9eE%.%+%-]') then return nil end
  local n = tonum(v)
  if n == nil or n ~= n then return nil end
  if n == HUGE or n == -HUGE then return nil, 'overflow' end
  return n
end

-- native(st, hlen): the verdict on a native bucket read as
-- HMGET key tokens ts capacity rate allowed denied, with HLEN key. Returns tokens, ts,
-- capacity, rate, allowed, denied (a missing counter is 0); or nil, kind, why, where kind is
-- 'shape' (not a native bucket: a field missing, others besides, a value not a number) or
-- 'corrupt' (a native bucket whose stored value overflows or is out of range).
-- The common path allocates nothing: messages are built on the refusing paths only.
local function native(st, hlen)
  local v1, v2, v3, v4, v5, v6 = st[1], st[2], st[3], st[4], st[5], st[6]
  if not (v1 and v2 and v3 and v4) then return nil, 'shape', 'a field of a native bucket is missing' end
  local n = 4
  if v5 then n = n + 1 end
  if v6 then n = n + 1 end
  if hlen ~= n then return nil, 'shape', 'the hash holds other fields too' end
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
