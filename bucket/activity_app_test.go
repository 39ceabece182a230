package bucket_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestDerivedConsumption: each application (its own script, its own clock, right or 5 s
// fast) takes 15 tokens a second for 10 s from a bucket of 100 refilled at 10/s, while
// bucketctl reads it about once a second, as watch and top do. The consumption derived from
// the reads adds up to the tokens taken (within 5% of 15/s on average); native
// buckets' allowed/s and used/s agree; a bucket nobody touches, stored ahead, shows 0.
func TestDerivedConsumption(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	sp := bucket.Spec{Capacity: 100, Rate: 10}
	base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixMicro()
	const every = int64(1_000_000 / 15) // µs between takes
	for name, o := range oracles(t) {
		if o.serverClock {
			continue // Spring reads Redis TIME: its whole-second case is in TestActivitySince
		}
		if o.layout.Native { // take, not peek
			o.args = func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
				return []string{k}, []any{num(sp.Capacity), num(sp.Rate), num(cost), strconv.FormatInt(now, 10), "take"}
			}
		}
		// Upstash refills in whole intervals counted from refilledAt, a point of its grid, not
		// its last write: a 10 s interval cannot sustain 15/s from 100 for 10 s, and a bucket
		// a fast client creates between two reads is derived from the grid as if written then
		// (one refill step too many at that first read). Its derived use is checked on a
		// clock that agrees with the server's, in 1 s steps.
		stepped := o.layout.Name == "upstash" || o.layout.Like == "upstash"
		if stepped && o.layout.Interval > time.Second {
			continue
		}
		for _, skew := range []int64{0, 5e6} {
			if stepped && skew != 0 {
				continue
			}
			t.Run(name+"/skew="+time.Duration(skew*1000).String(), func(t *testing.T) {
				key := "use:" + name
				c.Del(context.Background(), o.layout.Keys(key)...)
				var prev bucket.State
				var derived, taken float64
				next := base // the next take, in server time
				for k := int64(0); k <= 10; k++ {
					readAt := base + k*1e6 + (k%3)*37_000 - 20_000 // jittered reads
					n := 0.0
					for ; next < readAt; next += every {
						if !o.run(t, c, key, sp, next+skew, 1).allowed {
							t.Fatalf("take at %d denied", next)
						}
						n++
					}
					cur := inspectAt(t, c, key, o, sp, readAt)
					if k > 0 {
						a, ok := cur.ActivitySince(prev)
						if !ok || !a.ConsumedKnown {
							t.Fatalf("read %d: no activity", k)
						}
						// Each read's figure is the takes since the last; the first read after
						// the bucket appeared cannot tell the refill it threw away while full.
						if used := a.Consumed * a.Interval.Seconds(); math.Abs(used-n) > 1e-6 && (k > 1 || math.Abs(used-n) > 0.5) {
							t.Fatalf("read %d: derived %v tokens used, %v were taken", k, used, n)
						}
						derived += a.Consumed * a.Interval.Seconds()
						taken += n
						if a.Counted && math.Abs(a.Allowed-a.Consumed) > 1e-6 {
							t.Fatalf("read %d: allowed %v/s, used %v/s", k, a.Allowed, a.Consumed)
						}
					}
					prev = cur
				}
				elapsed := float64(prev.Now-(base-20_000)) / 1e6
				// The reads cannot tell the 20 ms the new bucket sat full before the first take
				// (0.2 tokens of refill) from use, nor (a fast client) the last 20 ms of its lead.
				if math.Abs(derived-taken) > 0.5 || math.Abs(derived/elapsed-15) > 0.05*15 {
					t.Fatalf("derived %v tokens used (%.3f/s) while %v were taken in %.3fs", derived, derived/elapsed, taken, elapsed)
				}
			})
		}
		t.Run(name+"/idle-ahead", func(t *testing.T) {
			key := "idle:" + name
			o.write(t, c, key, sp, bucket.Level{Tokens: 20, TS: base + 5e6}, true)
			prev := inspectAt(t, c, key, o, sp, base)
			cur := inspectAt(t, c, key, o, sp, base+1e6)
			if a, ok := cur.ActivitySince(prev); !ok || a.Consumed != 0 || cur.Ahead != 4*time.Second {
				t.Fatalf("idle bucket stored 5 s ahead: %+v (ahead %v), want no use", a, cur.Ahead)
			}
		})
	}
}

// TestDerivedConsumptionSpring: Spring reads Redis TIME in whole seconds, so its 10 s are
// virtual: before each call the stored second is moved by the whole seconds between the
// virtual clock and the server's, and moved back after it (a call whose second turned is
// undone and made again). It takes 15/s from 100 refilled at 10/s in whole seconds, read
// about once a second: the derived use adds up to the tokens taken.
func TestDerivedConsumptionSpring(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	o := oracles(t)["spring"]
	sp := bucket.Spec{Capacity: 100, Rate: 10}
	const key = "use:spring"
	const sec = int64(1e6)
	base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).UnixMicro()
	c.Del(ctx, key)
	// take runs Spring once at virtual time v.
	take := func(v int64) {
		before, _ := c.HGetAll(ctx, key).Result()
		for try := 0; ; try++ {
			if try > 5 {
				t.Fatal("the server's second keeps turning")
			}
			server := serverMicros(t, c)
			offset := floorDiv(v, sec) - floorDiv(server, sec) // whole seconds
			if last, ok := before["last_refill_time"]; ok {
				n, _ := strconv.ParseInt(last, 10, 64)
				c.HSet(ctx, key, "tokens", before["tokens"], "last_refill_time", n-offset)
			}
			if !o.run(t, c, key, sp, 0, 1).allowed {
				t.Fatalf("take at %d denied", v)
			}
			if floorDiv(serverMicros(t, c), sec) != floorDiv(server, sec) {
				c.Del(ctx, key)
				if len(before) > 0 {
					c.HSet(ctx, key, "tokens", before["tokens"], "last_refill_time", before["last_refill_time"])
				}
				continue
			}
			n, _ := strconv.ParseInt(c.HGet(ctx, key, "last_refill_time").Val(), 10, 64)
			c.HSet(ctx, key, "last_refill_time", n+offset)
			return
		}
	}
	var prev bucket.State
	var derived, taken float64
	next := base + 700_000 // the first take, in virtual time
	for k := int64(0); k <= 10; k++ {
		readAt := base + k*sec + (k%3)*370_000 + 500_000 // jittered reads, mid-second
		n := 0.0
		for ; next < readAt; next += 1_000_000 / 15 {
			take(next)
			n++
		}
		cur := inspectAt(t, c, key, o, sp, readAt)
		if k > 0 {
			a, ok := cur.ActivitySince(prev)
			if !ok {
				t.Fatalf("read %d: no activity", k)
			}
			// Each read's figure is the takes since the last, exactly: the refill between
			// them counted in Spring's whole seconds (a continuous refill would count 0.5 s
			// for 1 or 2 whole seconds, and alternate).
			if used := a.Consumed * a.Interval.Seconds(); math.Abs(used-n) > 1e-6 {
				t.Fatalf("read %d: derived %v tokens used, %v were taken", k, used, n)
			}
			derived += a.Consumed * a.Interval.Seconds()
			taken += n
		}
		prev = cur
	}
	elapsed := float64(prev.Now-(base+500_000)) / 1e6
	if math.Abs(derived-taken) > 1e-6 || math.Abs(derived/elapsed-15) > 0.05*15 {
		t.Fatalf("derived %v tokens used (%.3f/s) while %v were taken in %.3fs", derived, derived/elapsed, taken, elapsed)
	}
}
