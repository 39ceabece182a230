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
	}{{"rate:float", th}, {"t:neg", rr}, {"t:pad", th}, {"t:hex", rr}, {"t:hash", th}, {"rate:big", rr}}
	for _, c := range cases {
		before, _ := rdb.Dump(ctx, c.key).Result()
		for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 5}} {
			out, err := st.ResetMany(ctx, []bucket.ResetOp{{Key: c.key, Layout: c.l, Spec: spec, To: to}})
			if err != nil || out[0] != bucket.ResetChanged {
				t.Fatalf("%s as %s %+v: %v %v, want left untouched", c.key, c.l.Name, to, out, err)
			}
		}
		if after, _ := rdb.Dump(ctx, c.key).Result(); after != before {
			t.Fatalf("%s changed", c.key)
		}
	}
	// A value of the library's form is set with the library's TTL, and a missing key created.
	rdb.Set(ctx, "t:ok", strconv.FormatInt(now.UnixNano(), 10), time.Minute)
	out, err := st.ResetMany(ctx, []bucket.ResetOp{
		{Key: "t:ok", Layout: th, Spec: spec, To: bucket.ResetTo{Tokens: 4}},
		{Key: "rate:new", Layout: rr, Spec: spec, To: bucket.ResetTo{Tokens: 4}},
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
