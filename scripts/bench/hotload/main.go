package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/scripts/bench/loopback"
)

func main() {
	native := flag.String("native", "", "native bucket to decide on")
	nativeRate := flag.Float64("native-rate", 1500, "native decisions per second")
	other := flag.String("other", "", "express bucket to decide on")
	otherRate := flag.Float64("other-rate", 500, "express decisions per second")
	noiseRate := flag.Float64("noise-rate", 100, "SETs per second on random session:N keys")
	noiseKeys := flag.Int("noise-keys", 200000, "how many session keys the noise picks from")
	duration := flag.Duration("duration", 30*time.Second, "how long to run")
	c := loopback.Client("hotload", 16)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	st := bucket.NewStore(c)
	var express apptest.App
	for _, a := range apptest.Apps {
		if a.Layout == "express" {
			express = a
		}
	}
	var wg sync.WaitGroup
	paced := func(rate float64, conc int, fn func() error) {
		if rate <= 0 {
			return
		}
		for range conc {
			wg.Go(func() {
				start, sent := time.Now(), 0
				for ctx.Err() == nil {
					due := int(time.Since(start).Seconds() * rate / float64(conc))
					for ; sent < due && ctx.Err() == nil; sent++ {
						if err := fn(); err != nil && ctx.Err() == nil {
							fmt.Fprintln(os.Stderr, "hotload:", err)
							return
						}
					}
					time.Sleep(2 * time.Millisecond)
				}
			})
		}
	}
	if *native != "" {
		spec := bucket.Spec{Capacity: 100, Rate: 50}
		paced(*nativeRate, 4, func() error { _, err := st.Take(ctx, *native, spec, 1); return err })
	}
	if *other != "" {
		paced(*otherRate, 2, func() error { _, err := express.Decide(ctx, c, *other, 1e6, 1e6, time.Now()); return err })
	}
	paced(*noiseRate, 1, func() error {
		return c.Set(ctx, fmt.Sprintf("session:%d", rand.IntN(*noiseKeys)), "x", 0).Err()
	})
	wg.Wait()
}
