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

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// BenchmarkServerCost measures what one decision costs the Redis server, bucketctl's Take
// against go-redis/redis_rate's GCRA Allow, on the same server: the µs of script time
// (INFO commandstats, EVALSHA and EVAL) per decision, for the same number of decisions
// over the same number of keys with the same concurrency. Three interleaved runs of each
// (which one goes first alternates); the medians and their ratio are reported.
//
//	go test ./bucket -run NONE -bench ServerCost -benchtime 1x
func BenchmarkServerCost(b *testing.B) {
	const decisions, keys, workers, rounds = 30000, 100, 8, 3
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 32, MaxRetries: -1})
	defer rdb.Close()
	impls := competitors(b, rdb, false)
	run := func(name string, take func(string) error) float64 {
		before := scriptUsec(b, rdb)
		var next atomic.Int64
		var wg sync.WaitGroup
		var errs atomic.Int64
		for w := range workers {
			wg.Go(func() {
				for i := next.Add(1); i <= decisions; i = next.Add(1) {
					if err := take(fmt.Sprintf("cost:%s:%d", name, (int(i)+w)%keys)); err != nil {
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
	for b.Loop() {
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
