-- bucketctl read: what one key holds, in one command, writing nothing (scripts/doc.go).
local maxf, maxlen = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TYPE', KEYS[1])['ok']
local r = { t, redis.call('PTTL', KEYS[1]), 0, false }
if t == 'hash' then
  r[3] = redis.call('HLEN', KEYS[1])
  if r[3] <= maxf then r[4] = redis.call('HGETALL', KEYS[1]) end
elseif t == 'string' then
  r[3] = redis.call('STRLEN', KEYS[1])
  if r[3] <= maxlen then r[4] = redis.call('GET', KEYS[1]) end
end
-- A native bucket's tagged value pairs with no key.
local paired = r[4] and t == 'string' and string.sub(r[4], 1, 13) ~= 'bucketctl:v1:'
for i = 2, #KEYS do
  local v = false
  if paired and redis.call('TYPE', KEYS[i])['ok'] == 'string'
      and redis.call('STRLEN', KEYS[i]) <= maxlen then
    v = redis.call('GET', KEYS[i])
  end
  r[#r + 1] = v
end
return r
