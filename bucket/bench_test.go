package bucket_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// competitor is one limiter the benchmarks compare: one decision of cost 1 on key.
type competitor struct {
	name string
	take func(key string) error
}

// competitors are bucketctl's Take (coalescing, and with direct, without) and redis_rate's
// Allow, with the same limit: 100 tokens, 100 a second.
func competitors(b *testing.B, rdb *redis.Client, direct bool) []competitor {
	return competitorsAt(b, rdb, direct, 100, time.Second)
}

// competitorsAt are the competitors with a limit of burst tokens refilled in per.
func competitorsAt(b *testing.B, rdb *redis.Client, direct bool, burst int, per time.Duration) []competitor {
	ctx := context.Background()
	st := bucket.NewStore(rdb)
	if _, _, err := st.LoadScript(ctx); err != nil {
		b.Fatal(err)
	}
	limiter := redis_rate.NewLimiter(rdb)
	sp := bucket.Spec{Capacity: float64(burst), Rate: float64(burst) / per.Seconds()}
	limit := redis_rate.Limit{Rate: burst, Burst: burst, Period: per}
	out := []competitor{{"bucketctl", func(key string) error { _, err := st.Take(ctx, key, sp, 1); return err }}}
	if direct {
		d := bucket.NewStore(rdb, bucket.WithCoalescing(0))
		out = append(out, competitor{"bucketctl_direct", func(key string) error { _, err := d.Take(ctx, key, sp, 1); return err }})
	}
	return append(out, competitor{"redis_rate", func(key string) error { _, err := limiter.Allow(ctx, key, limit); return err }})
}

var passes = flag.Int("passes", 1, "BenchmarkTake: how many times each row runs, the competitors in turn within each pass")

// BenchmarkTake measures one decision per op against a real local redis-server, side by side
// with go-redis/redis_rate's Allow in the same run: 1, 16, 64 and 256 goroutines, on one hot
// key and on one key per goroutine; with -passes N, each row N times, competitors interleaved.
// One goroutine's rows are paired (takePaired).
//
//	go test ./bucket -run NONE -bench 'Take$' -benchmem -passes 5
func BenchmarkTake(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 300, MaxRetries: -1})
	defer rdb.Close()
	impls := competitors(b, rdb, true)
	for _, mode := range []string{"hot_key", "per_key"} {
		for range *passes {
			b.Run("paired/"+mode+"/g1", func(b *testing.B) { takePaired(b, impls, mode) })
		}
		for _, g := range []int{16, 64, 256} {
			for _, impl := range slices.Repeat(impls, *passes) {
				b.Run(fmt.Sprintf("%s/%s/g%d", impl.name, mode, g), func(b *testing.B) {
					keys := make([]string, g)
					for i := range keys {
						keys[i] = "bench:" + mode + ":" + impl.name
						if mode == "per_key" {
							keys[i] += fmt.Sprint(":", i)
						}
					}
					var next atomic.Int64
					var errs atomic.Int64
					var wg sync.WaitGroup
					b.ReportAllocs()
					srv0, cli0 := serverCPU(b, rdb), clientCPU()
					b.ResetTimer()
					for w := 0; w < g; w++ {
						wg.Add(1)
						go func(key string) {
							defer wg.Done()
							for next.Add(1) <= int64(b.N) {
								if err := impl.take(key); err != nil {
									errs.Add(1)
								}
							}
						}(keys[w])
					}
					wg.Wait()
					b.StopTimer()
					b.ReportMetric(float64(serverCPU(b, rdb)-srv0)/1e3/float64(b.N), "srv-cpu-µs/op")
					b.ReportMetric(float64(clientCPU()-cli0)/1e3/float64(b.N), "cli-cpu-µs/op")
					if n := errs.Load(); n > 0 {
						b.Fatalf("%d errors", n)
					}
				})
			}
		}
	}
}

// takePaired measures one goroutine's decisions as pairs: each op is one decision by every
// competitor, the first of them rotating, so a slow spell of the machine falls on all alike.
// A lone decision is one round trip, whose time on a busy host swings several-fold within
// seconds; passes run back to back would measure the machine, not the competitors.
func takePaired(b *testing.B, impls []competitor, mode string) {
	keys := make([]string, len(impls))
	for i, impl := range impls {
		keys[i] = "bench:" + mode + ":" + impl.name
		if mode == "per_key" {
			keys[i] += ":0"
		}
	}
	spent := make([]time.Duration, len(impls))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for j := range impls {
			i := (n + j) % len(impls)
			t0 := time.Now()
			if err := impls[i].take(keys[i]); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(t0)
		}
	}
	b.StopTimer()
	for i, impl := range impls {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), impl.name+"-ns/take")
	}
}

// serverCPU is redis-server's CPU time so far (user + system), from INFO cpu.
func serverCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, line := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO cpu %s: %v", k, err)
			}
			total += time.Duration(f * float64(time.Second))
		}
	}
	return total
}

// clientCPU is this process's CPU time so far (user + system).
func clientCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
