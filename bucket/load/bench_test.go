package load_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// BenchmarkEngine measures the engine's closed loop with 64 workers on one key against a
// local redis-server, b.N decisions per run: ns/op is the wall time per decision of the
// whole run, ops/s the engine's own figure (first request to last answer). "open" is a
// bucket so large every decision is allowed; "hot" is capacity 10, rate 10/s (all but a
// few denied). Client and server share the machine's cores, so they compete for CPU.
//
//	go test -run '^$' -bench Engine -benchtime 200000x ./bucket/load/
func BenchmarkEngine(b *testing.B) {
	srv := redistest.Start(b)
	o := srv.Options()
	o.PoolSize, o.MaxRetries, o.Protocol = 68, -1, 2 // as bucketctl load's workers
	c := redis.NewClient(o)
	b.Cleanup(func() { _ = c.Close() })
	st := bucket.NewStore(c)
	specs := map[string]bucket.Spec{"open": {Capacity: 1e15, Rate: 1e15}, "hot": {Capacity: 10, Rate: 10}}
	n := 0
	for _, bc := range []struct {
		name     string
		strategy load.Strategy
		pipeline int
	}{{"lua", load.Lua, 1}, {"lua-pipeline16", load.Lua, 16}, {"multi", load.Multi, 1}, {"watch", load.Watch, 1}} {
		for _, sp := range []string{"open", "hot"} {
			b.Run(bc.name+"/"+sp, func(b *testing.B) {
				n++
				e, err := load.New(st, load.Config{Key: fmt.Sprintf("bench:%d", n), Spec: specs[sp], Cost: 1,
					Strategy: bc.strategy, Pipeline: bc.pipeline, Concurrency: 64, Requests: int64(b.N)})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				r, err := e.Run(context.Background())
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.OpsPerSec, "ops/s")
				b.ReportMetric(r.RedisCallsPerRequest, "calls/op")
				b.ReportMetric(float64(r.Errors)/float64(max(1, r.Requests)), "errors/op")
			})
		}
	}
}
