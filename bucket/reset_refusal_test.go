package bucket_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/scripts"
)

// TestResetManyRefusedWrites: a server that refuses writes (min-replicas-to-write without a
// replica) fails each op with a *KeyError naming its key; Refusal names the reason and
// ReplyText drops the script's SHA1 and line that Redis appends.
func TestResetManyRefusedWrites(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	keys := []string{"rf:1", "rf:2"}
	var ops []bucket.ResetOp
	for _, k := range keys {
		if _, err := st.Take(ctx, k, spec, 1); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, bucket.ResetOp{Key: k, Layout: bucket.NativeLayout, Spec: spec, To: bucket.ResetTo{Delete: true}})
	}
	if err := c.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	out, err := st.ResetMany(ctx, ops)
	if len(out) != 2 || out[0] != bucket.ResetFailed || out[1] != bucket.ResetFailed {
		t.Fatalf("outcomes %v, want both failed (%v)", out, err)
	}
	if got := rediserr.Refusal(err); got != "NOREPLICAS" {
		t.Errorf("Refusal(%v) = %q, want NOREPLICAS", err, got)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 2 {
		t.Fatalf("want two joined errors, got %v", err)
	}
	for i, e := range joined.Unwrap() {
		var ke *bucket.KeyError
		if !errors.As(e, &ke) || ke.Key != keys[i] {
			t.Errorf("error %d: %v, want a *KeyError for %q", i, e, keys[i])
		}
		if got := rediserr.ReplyText(e); got != "NOREPLICAS Not enough good replicas to write" {
			t.Errorf("ReplyText %q (from %q)", got, e)
		}
	}
	if _, err := st.Take(ctx, "rf:1", spec, 1); rediserr.Refusal(err) != "NOREPLICAS" || strings.Contains(rediserr.ReplyText(err), "script:") {
		t.Errorf("Take: %v, want a NOREPLICAS reply", err)
	}
	if got := rediserr.Refusal(errors.New("ERR unknown command")); got != "" {
		t.Errorf("Refusal of another error: %q", got)
	}
}

// TestResetLoneLevelWithinDeclaredCapacity: a two-key layout's level without its time key
// is a bucket only where its layout is declared and only within the declared capacity, and
// the script that writes checks it: a level read as a bucket and replaced by a lease before
// the reset (the lease is a bare number too) is left exactly as it is.
func TestResetLoneLevelWithinDeclaredCapacity(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	webman, err := bucket.LookupLayout("webman")
	if err != nil {
		t.Fatal(err)
	}
	declared := func(string) bucket.Target {
		return bucket.Target{Layout: &webman, Spec: bucket.Spec{Capacity: 10, Rate: 1}, Source: "test"}
	}
	for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 10}} {
		if err := c.Set(ctx, "wm:lone", "5", 0).Err(); err != nil {
			t.Fatal(err)
		}
		states, err := st.Inspect(ctx, []string{"wm:lone"}, declared)
		if err != nil || states[0].Problem != "" || states[0].Layout.Name != "webman" {
			t.Fatalf("a declared lone level 5 of capacity 10: %+v %v, want a webman bucket", states, err)
		}
		// The application stores a lease there now: a bare number beyond the capacity.
		if err := c.Set(ctx, "wm:lone", "1700000000", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.ResetState(ctx, states[0], to); !errors.Is(err, bucket.ErrChanged) {
			t.Errorf("reset %+v of a level replaced by a lease: %v, want ErrChanged", to, err)
		}
		if v := c.Get(ctx, "wm:lone").Val(); v != "1700000000" {
			t.Fatalf("reset %+v changed the lease to %q", to, v)
		}
		// Read again, the lease is no bucket (the read's rule, the same bound).
		states, err = st.Inspect(ctx, []string{"wm:lone"}, declared)
		if err != nil || !strings.HasPrefix(states[0].Problem, "not a bucket") {
			t.Fatalf("the lease read: %+v %v, want not a bucket", states, err)
		}
	}
}

// TestResetScriptWithoutDeclaration: a caller of the reset script that leaves out ARGV[13]
// declares no layout, so a lone bare number that looks like a redis_rate TAT (the right
// prefix, a TTL tied to it) is refused (-3) and left as it is.
func TestResetScriptWithoutDeclaration(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// redis_rate's TAT: seconds since 2017-01-01 UTC, one second ahead, with the TTL it sets.
	tat := strconv.FormatFloat(float64(now.UnixMicro())/1e6-1483228800+1, 'f', 6, 64)
	if err := c.Set(ctx, "rate:x", tat, time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	base := []interface{}{"delete", "gcra", "redis_rate", "1483228800", "2000000", "2000000", "", "s", "0", "", "", "1"}
	for _, args := range [][]interface{}{base, append(append([]interface{}{}, base...), "")} {
		got, err := c.Eval(ctx, scripts.Reset(), []string{"rate:x"}, args...).Int64()
		if err != nil || got != -3 {
			t.Errorf("reset with %d arguments: %d %v, want -3 (no layout declared)", len(args), got, err)
		}
		if v := c.Get(ctx, "rate:x").Val(); v != tat {
			t.Fatalf("the number changed to %q", v)
		}
	}
}
