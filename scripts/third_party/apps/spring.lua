-- rate_limit.lua
-- 参数说明:
-- KEYS[1]: 限流的唯一 Key (例如 rate_limit:api:user_123)
-- ARGV[1]: 桶的容量 (capacity)
-- ARGV[2]: 令牌生成速率 (rate, token/sec)
-- ARGV[3]: 当前请求需要的令牌数 (requested_tokens, 默认 1)

local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])

-- 获取 Redis 服务器当前时间(秒级和微秒级),保证分布式时钟一致性
-- 相比由客户端传入时间,使用 Redis 自身时间能避免服务器时钟不同步问题
local time_info = redis.call('TIME')
local now = tonumber(time_info[1])

-- 获取当前桶的剩余令牌数和上次填充时间
local info = redis.call('HMGET', key, 'tokens', 'last_refill_time')
local current_tokens = tonumber(info[1])
local last_refill_time = tonumber(info[2])

-- 初始化:如果 key 不存在,说明是第一次访问,默认桶是满的
if current_tokens == nil then
current_tokens = capacity
last_refill_time = now
end

-- 计算惰性填充
if now > last_refill_time then
local delta = now - last_refill_time
-- 计算这段时间生成的令牌:时间差 * 速率
local filled = delta * rate
-- 令牌数不能超过桶容量
current_tokens = math.min(capacity, current_tokens + filled)
-- 更新填充时间
last_refill_time = now
end

-- 判断令牌是否足够
local allowed = false
if current_tokens >= requested then
current_tokens = current_tokens - requested
allowed = true
end

-- 更新 Redis 状态
redis.call('HMSET', key, 'tokens', current_tokens, 'last_refill_time', last_refill_time)
-- 设置 Key 过期时间(例如 60 秒),防止冷数据长期占用内存
-- 过期时间应至少大于 (capacity / rate),确保桶满之前不会丢失数据
redis.call('EXPIRE', key, math.ceil(capacity/rate) + 60)

return allowed
