package bucket_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// BenchmarkServerCost measures what one decision costs the Redis server, bucketctl's Take
// against go-redis/redis_rate's GCRA Allow, on the same server: the µs of script time
// (INFO commandstats, EVALSHA and EVAL) per decision, for the same number of decisions
// over the same number of keys with the same concurrency, allows only (a limit no run
// reaches) and denies only (each key drained first, refilled once an hour). Three
// interleaved runs of each (which one goes first alternates); the medians and their ratio
// are reported.
//
//	go test ./bucket -run NONE -bench ServerCost -benchtime 1x
func BenchmarkServerCost(b *testing.B) {
	const decisions, keys, workers, rounds = 30000, 100, 8, 3
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 32, MaxRetries: -1})
	defer rdb.Close()
	for _, w := range []struct {
		name  string
		burst int
		per   time.Duration
	}{{"allow", 1_000_000_000, time.Second}, {"deny", 1, time.Hour}} {
		impls := competitorsAt(b, rdb, false, w.burst, w.per)
		key := func(name string, i int) string { return fmt.Sprintf("cost:%s:%s:%d", w.name, name, i%keys) }
		run := func(name string, take func(string) error) float64 {
			before := scriptUsec(b, rdb)
			var next atomic.Int64
			var wg sync.WaitGroup
			var errs atomic.Int64
			for g := range workers {
				wg.Go(func() {
					for i := next.Add(1); i <= decisions; i = next.Add(1) {
						if err := take(key(name, int(i)+g)); err != nil {
							errs.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if n := errs.Load(); n > 0 {
				b.Fatalf("%s: %d errors", name, n)
			}
			return (scriptUsec(b, rdb) - before) / decisions
		}
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				for _, impl := range impls {
					for i := range keys { // created (and, for deny, drained) before the runs
						_ = impl.take(key(impl.name, i))
					}
				}
				per := map[string][]float64{}
				for r := range rounds {
					for i := range impls {
						impl := impls[(i+r)%len(impls)]
						per[impl.name] = append(per[impl.name], run(impl.name, impl.take))
					}
				}
				ours, theirs := median(per["bucketctl"]), median(per["redis_rate"])
				b.ReportMetric(ours, "bucketctl-srv-µs/decision")
				b.ReportMetric(theirs, "redis_rate-srv-µs/decision")
				b.ReportMetric(ours/theirs, "ratio")
			}
		})
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// scriptUsec is the server's total µs in EVALSHA and EVAL so far (INFO commandstats).
func scriptUsec(b *testing.B, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	total := 0.0
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatalf("commandstats %q: %v", line, err)
				}
				total += f
			}
		}
	}
	return total
}
