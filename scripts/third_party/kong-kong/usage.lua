local cache_key, expiration = KEYS[1], ARGV[1]
local result_incr = redis.call("incr", cache_key)
if result_incr == 1 then
  redis.call("expire", cache_key, expiration)
end

return result_incr - 1
