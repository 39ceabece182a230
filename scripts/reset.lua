-- bucketctl reset: set a bucket of any layout to N tokens, or delete it, atomically.
-- It refuses (error reply, nothing written) when a key holds another Redis type.
--
-- KEYS[1]  the bucket key (the tokens key for a strings layout)
-- KEYS[2]  strings layouts only: the time key
-- ARGV[1]  "set" or "delete"
-- ARGV[2]  layout type: "hash" or "strings"
-- ARGV[3]  tokens field, ARGV[4] time field (hash layouts)
-- ARGV[5]  tokens to write (string)
-- ARGV[6]  time unit: "s", "ms" or "us"; ARGV[7] "1" when the time is written as a float
-- ARGV[8]  TTL in milliseconds to set, or "" to keep the key's TTL (or lack of one)
-- ARGV[9]  now in microseconds, or "" for Redis TIME
-- ARGV[10..] extra field/value pairs to write (hash layouts: the native spec)
-- Reply: the number of keys written or deleted.

local want = ARGV[2]
for i = 1, #KEYS do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'none' and t ~= (want == 'hash' and 'hash' or 'string') then
    return redis.error_reply('WRONGTYPE bucketctl: ' .. KEYS[i] .. ' holds a ' .. t .. ', not a ' .. want .. ' bucket')
  end
end

if ARGV[1] == 'delete' then
  return redis.call('DEL', unpack(KEYS))
end

local now
if ARGV[9] ~= nil and ARGV[9] ~= '' then
  now = tonumber(ARGV[9])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local per = { s = 1000000, ms = 1000, us = 1 }
local div = per[ARGV[6]]
if div == nil then return redis.error_reply('ERR bucketctl: unknown time unit ' .. tostring(ARGV[6])) end
local ts
if ARGV[7] == '1' then
  ts = string.format('%.6f', now / div)
  if div == 1 then ts = string.format('%d', now) end
else
  ts = string.format('%d', math.floor(now / div))
end

local ttl = ARGV[8]
if want == 'hash' then
  local args = { ARGV[3], ARGV[5], ARGV[4], ts }
  for i = 10, #ARGV do args[#args + 1] = ARGV[i] end
  redis.call('HSET', KEYS[1], unpack(args))
  if ttl ~= '' then redis.call('PEXPIRE', KEYS[1], ttl) end
  return 1
end
for i, v in ipairs({ ARGV[5], ts }) do
  if ttl ~= '' then
    redis.call('SET', KEYS[i], v, 'PX', ttl)
  else
    redis.call('SET', KEYS[i], v, 'KEEPTTL')
  end
end
return 2
