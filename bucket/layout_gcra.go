package bucket

// The GCRA presets (gcra.go holds their libraries' arithmetic).
func init() {
	register(Layout{Name: "redis-rate", Type: GCRA, Library: libRedisRate, KeyPrefix: "rate:", Epoch: redisRateEpoch,
		TimeUnit: unitS, FloatTime: true, model: ownModel{},
		About: "go-redis/redis_rate v10: string rate:KEY = TAT, seconds since 2017-01-01 UTC (float), EX ceil(time to full); capacity = Burst"})
	register(Layout{Name: "throttled", Type: GCRA, Library: libThrottled, TimeUnit: unitNS, model: ownModel{},
		About: "throttled/throttled v2 goredisstore: string PREFIX+KEY = TAT, Unix ns (integer), TTL floor(time to full) s, min 1 s; capacity = MaxBurst+1"})
}
