package main

import (
	"bufio"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/scripts/bench/loopback"
)

// floorScript is floor.lua: what one decision on the native layout costs before any check.
//
//go:embed floor.lua
var floorScript string

func main() {
	impl := flag.String("impl", "bucketctl", "bucketctl, redis_rate or floor (floor.lua: the native layout's reads and writes, no check)")
	lanes := flag.Int("lanes", -1, "bucketctl's coalescing lanes (-1: the Store's default, 0: none)")
	decisions := flag.Int("decisions", 30000, "decisions to make")
	keys := flag.Int("keys", 100, "keys they spread over")
	workers := flag.Int("workers", 8, "concurrent callers")
	workload := flag.String("workload", "mixed", "mixed (100 tokens, 100 a second), allow (a limit never reached) or deny (1 token an hour, drained by the warm-up)")
	ctx := context.Background()
	c := loopback.Client("decisions", 32)
	defer c.Close()
	burst, per := 100, time.Second
	switch *workload {
	case "allow":
		burst = 1_000_000_000
	case "deny":
		burst, per = 1, time.Hour
	case "mixed":
	default:
		fmt.Fprintln(os.Stderr, "decisions: -workload must be mixed, allow or deny")
		os.Exit(2)
	}
	rate := float64(burst) / per.Seconds()
	var take, warm func(key string) error
	switch *impl {
	case "bucketctl":
		var opts []bucket.Option
		if *lanes >= 0 {
			opts = append(opts, bucket.WithCoalescing(*lanes))
		}
		st := bucket.NewStore(c, opts...)
		sp := bucket.Spec{Capacity: float64(burst), Rate: rate}
		take = func(key string) error { _, err := st.Take(ctx, key, sp, 1); return err }
	case "redis_rate":
		lim := redis_rate.NewLimiter(c)
		limit := redis_rate.Limit{Rate: burst, Burst: burst, Period: per}
		take = func(key string) error { _, err := lim.Allow(ctx, key, limit); return err }
	case "floor":
		// The warm-up writes each bucket with the real script: floor.lua reads it as is.
		sc := redis.NewScript(floorScript)
		capS, rateS := strconv.Itoa(burst), strconv.FormatFloat(rate, 'g', -1, 64)
		st, sp := bucket.NewStore(c), bucket.Spec{Capacity: float64(burst), Rate: rate}
		warm = func(key string) error { _, err := st.Take(ctx, key, sp, 1); return err }
		take = func(key string) error { return sc.Run(ctx, c, []string{key}, capS, rateS).Err() }
	default:
		fmt.Fprintln(os.Stderr, "decisions: -impl must be bucketctl, redis_rate or floor")
		os.Exit(2)
	}
	key := func(i int) string { return fmt.Sprintf("decisions:%s:%d", *impl, i%*keys) }
	if warm == nil {
		warm = take
	}
	for i := range *keys {
		if err := warm(key(i)); err != nil {
			fmt.Fprintln(os.Stderr, "decisions:", err)
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		os.Exit(1)
	}
	var next, errs atomic.Int64
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(*decisions); i = next.Add(1) {
				if err := take(key(int(i) + w)); err != nil {
					errs.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := errs.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "decisions: %d of %d decisions failed\n", n, *decisions)
		os.Exit(1)
	}
}
