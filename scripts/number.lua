-- bucketctl's shared prelude: every script of bucketctl's that reads stored numbers starts with
-- this text (scripts.go assembles them), so the number grammar and the native bucket's ranges
-- are written once on the Lua side. Their Go side: bucket/number.go ParseNumber and
-- bucket/classify.go; a table test runs both on the same strings against a real server.

-- The ranges of a stored bucket (bucket: maxTokens, maxTime, maxCounter, MaxRefill).
local MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S = 1e15, 1e17, 9007199254740992, 3153600000

-- num(v): the number v holds by the one grammar, or nil. Grammar: optional sign, digits,
-- optional fraction, optional exponent, at most 64 bytes, finite; no spaces, hex, inf, nan.
-- The byte class leaves tonumber nothing but the grammar (Lua's strtod then refuses a
-- malformed rest); a value of that form that overflows gives nil, 'overflow' (corrupt).
local function num(v)
  if type(v) ~= 'string' or #v == 0 or #v > 64 or string.find(v, '[^0-9eE%.%+%-]') then return nil end
  local n = tonumber(v)
  if n == nil or n ~= n then return nil end
  if n == math.huge or n == -math.huge then return nil, 'overflow' end
  return n
end

-- native(st, hlen): the verdict on a native bucket read as
-- HMGET key tokens ts capacity rate allowed denied, with HLEN key. Returns tokens, ts,
-- capacity, rate, allowed, denied (a missing counter is 0); or nil, kind, why, where kind is
-- 'shape' (not a native bucket: a field missing, others besides, a value not a number) or
-- 'corrupt' (a native bucket whose stored value overflows or is out of range).
-- The common path allocates nothing: messages are built on the refusing paths only.
local function native(st, hlen)
  local n = 0
  for i = 1, 6 do if st[i] then n = n + 1 end end
  if not (st[1] and st[2] and st[3] and st[4]) then return nil, 'shape', 'a field of a native bucket is missing' end
  if hlen ~= n then return nil, 'shape', 'the hash holds other fields too' end
  for i = 1, 6 do
    if st[i] then
      local x, over = num(st[i])
      if x == nil then
        local name = ({ 'tokens', 'ts', 'capacity', 'rate', 'allowed', 'denied' })[i]
        if over then return nil, 'corrupt', name .. ' ' .. st[i] .. ' overflows a float' end
        return nil, 'shape', 'field ' .. name .. ' is not a number'
      end
    end
  end
  local t, ts, c, r = tonumber(st[1]), tonumber(st[2]), tonumber(st[3]), tonumber(st[4])
  local a, d = tonumber(st[5]) or 0, tonumber(st[6]) or 0
  if t < 0 or t > MAX_TOKENS then return nil, 'corrupt', 'tokens ' .. st[1] .. ' is out of range' end
  if ts < 0 or ts > MAX_TIME_US then return nil, 'corrupt', 'ts ' .. st[2] .. ' is not a time' end
  if c <= 0 or c > MAX_TOKENS then return nil, 'corrupt', 'capacity ' .. st[3] .. ' is out of range' end
  if r <= 0 or c / r > MAX_REFILL_S then return nil, 'corrupt', 'rate ' .. st[4] .. ' is out of range' end
  if a < 0 or a > MAX_COUNTER then return nil, 'corrupt', 'allowed ' .. st[5] .. ' is out of range' end
  if d < 0 or d > MAX_COUNTER then return nil, 'corrupt', 'denied ' .. st[6] .. ' is out of range' end
  return t, ts, c, r, a, d
end
