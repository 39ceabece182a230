package bucket_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// The reset script's gcra mode re-checks the library's number form inside the script: a key
// that no longer holds one (another type, another number form) is left byte for byte.
func TestGCRAResetLeavesWhatNoLongerFits(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	st := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	rr, th := bucket.Presets["redis-rate"], bucket.Presets["throttled"]
	cell, rg := bucket.Presets["redis-cell"], bucket.Presets["redis-gcra"]
	now := time.Now()
	rdb.Set(ctx, "rate:float", "12.5e3", 0)                                 // a float, not throttled's
	rdb.Set(ctx, "t:neg", "-5", 0)                                          // out of range
	rdb.Set(ctx, "t:pad", "0"+strconv.FormatInt(now.UnixNano(), 10)[1:], 0) // not canonical
	rdb.Set(ctx, "t:hex", "0x10", 0)                                        // not decimal
	rdb.HSet(ctx, "t:hash", "tat", strconv.FormatInt(now.UnixNano(), 10))   // a hash
	rdb.Set(ctx, "rate:big", strconv.FormatInt(now.UnixNano(), 10), 0)      // throttled's, not redis_rate's
	cases := []struct {
		key string
		l   bucket.Layout
	}{{"rate:float", th}, {"t:neg", rr}, {"t:pad", th}, {"t:hex", rr}, {"t:hash", th}, {"rate:big", rr},
		{"rate:float", cell}, {"t:pad", cell}, {"t:neg", rg}, {"rate:big", rg}}
	for _, c := range cases {
		before, _ := rdb.Dump(ctx, c.key).Result()
		for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 5}} {
			out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: c.key, Layout: c.l, Spec: spec, To: to, Declared: true}})
			if err != nil || out[0] != bucket.ResetChanged {
				t.Fatalf("%s as %s %+v: %v %v, want left untouched", c.key, c.l.Name, to, out, err)
			}
		}
		if after, _ := rdb.Dump(ctx, c.key).Result(); after != before {
			t.Fatalf("%s changed", c.key)
		}
	}
	// A value of the library's form with a TTL the library sets is set with the library's
	// TTL, and a missing key created.
	rdb.Set(ctx, "t:ok", strconv.FormatInt(now.Add(30*time.Second+500*time.Millisecond).UnixNano(), 10), 30*time.Second)
	// ... only where the layout is declared: the script itself refuses an undeclared one.
	okBefore, _ := rdb.Dump(ctx, "t:ok").Result()
	for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 4}} {
		out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: "t:ok", Layout: th, Spec: spec, To: to}})
		if err != nil || out[0] != bucket.ResetUndeclared {
			t.Fatalf("undeclared %+v: %v %v, want refused as undeclared", to, out, err)
		}
		if after, _ := rdb.Dump(ctx, "t:ok").Result(); after != okBefore {
			t.Fatal("an undeclared bare number changed")
		}
	}
	out, err := st.ResetMany(ctx, []bucket.ResetOp{
		{Key: "t:ok", Layout: th, Spec: spec, To: bucket.ResetTo{Tokens: 4}, Declared: true},
		{Key: "rate:new", Layout: rr, Spec: spec, To: bucket.ResetTo{Tokens: 4}, Declared: true},
	})
	if err != nil || out[0] != bucket.ResetDone || out[1] != bucket.ResetCreated {
		t.Fatalf("reset of fitting keys: %v %v", out, err)
	}
	for _, k := range []string{"t:ok", "rate:new"} {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl < 5*time.Second || ttl > 6*time.Second {
			t.Fatalf("%s: TTL %s, want the libraries' 6 s (floor/ceil of 6 s to full)", k, ttl)
		}
	}
}

// The reset script re-checks the TTL as well: the libraries always set one, tied to the TAT,
// so a number of the library's form without one (a counter, a flag) or with a TTL of its own
// is left byte for byte and keeps its TTL, also when it replaced a bucket after the read.
func TestGCRAResetLeavesNumbersWithoutTheLibrarysTTL(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	st := bucket.NewStore(rdb)
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	rr, th := bucket.Presets["redis-rate"], bucket.Presets["throttled"]
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	since2017 := strconv.FormatFloat(float64(now.UnixMicro())/1e6-1483228800, 'f', 6, 64)
	ns := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixNano(), 10) }
	cases := []struct {
		key, value string
		ttl        time.Duration
		l          bucket.Layout
	}{
		{"rl:signups:total", "1500", 0, rr},
		{"rl:feature:enabled", "1", 0, rr},
		{"rl:ver", "2.5", 0, rr},
		{"rate:now", since2017, 0, rr},                   // a TAT of now, no TTL
		{"rate:stamp", since2017, time.Hour, rr},         // a TTL of its own
		{"rate:daily", "1500", 24 * time.Hour, rr},       // a counter with a TTL
		{"t:seen", ns(0), 0, th},                         // a TAT of now, no TTL
		{"t:later", ns(time.Hour), 10 * time.Second, th}, // TAT beyond its TTL
		{"t:session", ns(0), 30 * time.Minute, th},
	}
	for _, c := range cases {
		if err := rdb.Set(ctx, c.key, c.value, c.ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	check := func(key string, ttl time.Duration, before string) {
		t.Helper()
		if after, _ := rdb.Dump(ctx, key).Result(); after != before {
			t.Errorf("%s changed to %q", key, rdb.Get(ctx, key).Val())
		}
		got := rdb.PTTL(ctx, key).Val()
		if (ttl == 0 && got != -1) || (ttl > 0 && (got <= ttl-time.Minute || got > ttl)) {
			t.Errorf("%s: TTL %s, was %s", key, got, ttl)
		}
	}
	for _, c := range cases {
		before, _ := rdb.Dump(ctx, c.key).Result()
		for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 2}} {
			out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: c.key, Layout: c.l, Spec: spec, To: to, Declared: true}})
			if err != nil || out[0] != bucket.ResetChanged {
				t.Errorf("%s = %q (TTL %s) as %s %+v: %v %v, want left untouched", c.key, c.value, c.ttl, c.l.Name, to, out, err)
			}
		}
		check(c.key, c.ttl, before)
	}

	// A race: a bucket read as one, then replaced by a counter before the reset.
	for _, l := range []bucket.Layout{rr, th} {
		key := map[string]string{"redis-rate": "rate:race", "throttled": "t:race"}[l.Name]
		w, err := l.GCRAReset(spec, 4, now)
		if err != nil {
			t.Fatal(err)
		}
		rdb.Set(ctx, key, w.Value, w.TTL)
		read, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target {
			return bucket.Target{Layout: &l, Spec: spec, Source: "test"}
		})
		if err != nil || read[0].Problem != "" || read[0].TAT == nil {
			t.Fatalf("%s: the library's own write read as %+v, %v", l.Name, read, err)
		}
		counter := map[string]string{"redis-rate": "1500", "throttled": ns(0)}[l.Name]
		rdb.Set(ctx, key, counter, 0)
		before, _ := rdb.Dump(ctx, key).Result()
		for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 2}} {
			out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: key, Layout: l, Spec: spec, To: to, Read: &read[0], Declared: true}})
			if err != nil || out[0] != bucket.ResetChanged {
				t.Errorf("%s replaced by %q after the read, %+v: %v %v, want left untouched", key, counter, to, out, err)
			}
		}
		check(key, 0, before)
	}
}
