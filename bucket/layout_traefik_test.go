package bucket_test

import (
	"context"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestTraefikResetOrderAndTTL: Traefik reads its hash by position (last, then tokens), so a
// reset --tokens N of a missing key, or of one whose fields were written the other way round,
// leaves last first, with the TTL Traefik sets (301 s at 1 request per 5 min), or the key's
// longer one; Traefik then serves exactly N.
func TestTraefikResetOrderAndTTL(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	layout := bucket.Presets["traefik"]
	var app apptest.App
	for _, a := range apptest.Apps {
		if a.Layout == "traefik" {
			app = a
		}
	}
	sp := bucket.Spec{Capacity: 5, Rate: 1.0 / 300}
	st := bucket.NewStore(c)
	for _, tc := range []struct {
		name    string
		plant   func(key string)
		wantTTL time.Duration
	}{
		{"missing", func(string) {}, 301 * time.Second},
		{"swapped", func(key string) {
			c.HSet(ctx, key, "tokens", "1", "last", time.Now().UnixMicro())
			c.Expire(ctx, key, time.Hour)
		}, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "rate:mw@file:" + tc.name
			tc.plant(key)
			if _, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: key, Layout: layout, Spec: sp, To: bucket.ResetTo{Tokens: 3}, Declared: true}}); err != nil {
				t.Fatal(err)
			}
			flat, err := c.Eval(ctx, "return redis.call('HGETALL', KEYS[1])", []string{key}).StringSlice() // in order
			if err != nil || len(flat) != 4 || flat[0] != "last" || flat[2] != "tokens" || flat[3] != "3" {
				t.Fatalf("HGETALL %q %v: want last first, then tokens 3", flat, err)
			}
			if ttl := c.PTTL(ctx, key).Val(); ttl > tc.wantTTL || ttl < tc.wantTTL-2*time.Second {
				t.Fatalf("TTL %v, want %v", ttl, tc.wantTTL)
			}
			now, err := c.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			served := 0
			for i := 0; i < 6; i++ {
				ok, err := app.Decide(ctx, c, key, sp.Capacity, sp.Rate, now)
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					served++
				}
			}
			if served != 3 {
				t.Fatalf("after reset --tokens 3 Traefik served %d", served)
			}
		})
	}
}
