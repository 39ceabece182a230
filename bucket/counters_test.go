package bucket_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestCountersNamedNeverBuckets: keys each counter limiter wrote with its own script (or
// its source's commands) are read as not buckets, named after their limiter, with no
// layout declared and with a token-bucket layout declared over them; a reset with that
// declaration, by the read state or straight through the reset script, writes nothing
// (no time key either).
func TestCountersNamedNeverBuckets(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	counters, err := apptest.PlantCounters(ctx, c, serverNow(t, c), 3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range counters {
		seen[k.Form] = true
	}
	for _, f := range bucket.CounterForms() {
		if !seen[f.Name] {
			t.Errorf("counter form %s has no key planted by its limiter's script", f.Name)
		}
	}
	webman := bucket.Presets["webman"]
	spec := bucket.Spec{Capacity: 100, Rate: 1}
	targets := map[string]func(string) bucket.Target{
		"undeclared":      nil,
		"declared webman": func(string) bucket.Target { return bucket.Target{Layout: &webman, Spec: spec, Source: "rule"} },
		"declared express": func(string) bucket.Target {
			l := bucket.Presets["express"]
			return bucket.Target{Layout: &l, Spec: spec}
		},
	}
	for what, resolve := range targets {
		for _, k := range counters {
			states, err := st.Inspect(ctx, []string{k.Key}, resolve)
			if err != nil {
				t.Fatal(err)
			}
			s := states[0]
			f, _ := bucket.LookupCounter(k.Form)
			want := "most likely " + f.Limiter
			if f.Generic() {
				want = "like " + f.Limiter
			}
			if !s.IsNotBucket() || s.Counter != k.Form || !strings.Contains(s.Problem, want) {
				t.Errorf("%s %s (%s): counter %q, problem %q; want not a bucket naming %q", what, k.Key, k.Form, s.Counter, s.Problem, want)
			}
			if _, err := s.ResetOp(bucket.ResetTo{Tokens: 50}); err == nil {
				t.Errorf("%s %s: a reset of a counter was planned", what, k.Key)
			}
		}
	}
	before, err := apptest.Snapshot(ctx, c, keysOf(counters))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, k := range counters {
		if k.Type != "string" {
			continue
		}
		_, err := st.Reset(ctx, k.Key, webman, spec, bucket.ResetTo{Tokens: 50})
		if !errors.Is(err, bucket.ErrChanged) {
			t.Errorf("reset.lua of %s declared webman: %v, want it left untouched (not a bucket)", k.Key, err)
		}
		if tk, _ := webman.TimeKeyOf(k.Key); c.Exists(ctx, tk).Val() != 0 {
			t.Errorf("reset.lua created %s", tk)
		}
	}
	after, err := apptest.Snapshot(ctx, c, keysOf(counters))
	if err != nil {
		t.Fatal(err)
	}
	if ch := apptest.Changes(before, after, time.Since(start)); len(ch) > 0 {
		t.Fatalf("counters changed: %v", ch)
	}
}

// TestLoneLevelTTLIsOwners: a declared webman level without its time key is a bucket only
// without a TTL (webman sets none): with one it is refused, read and written.
func TestLoneLevelTTLIsOwners(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	webman := bucket.Presets["webman"]
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	declared := func(string) bucket.Target { return bucket.Target{Layout: &webman, Spec: spec} }
	if err := c.Set(ctx, "wm:ttl", "5", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	states, err := st.Inspect(ctx, []string{"wm:ttl"}, declared)
	if err != nil || !states[0].IsNotBucket() || !strings.Contains(states[0].Problem, "never sets a TTL") {
		t.Fatalf("a lone level 5 with a TTL, declared webman: %+v %v", states, err)
	}
	if _, err := st.Reset(ctx, "wm:ttl", webman, spec, bucket.ResetTo{Tokens: 7}); !errors.Is(err, bucket.ErrChanged) {
		t.Fatalf("reset.lua of a lone level with a TTL: %v, want left untouched", err)
	}
	if v := c.Get(ctx, "wm:ttl").Val(); v != "5" || c.Exists(ctx, "wm:ttl:last_time").Val() != 0 {
		t.Fatalf("wm:ttl = %q, time key created: %d", v, c.Exists(ctx, "wm:ttl:last_time").Val())
	}
	// Without a TTL it is webman's own lone level: written, with its time key.
	if err := c.Persist(ctx, "wm:ttl").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Reset(ctx, "wm:ttl", webman, spec, bucket.ResetTo{Tokens: 7}); err != nil {
		t.Fatal(err)
	}
	if v := c.Get(ctx, "wm:ttl").Val(); v != "7" || c.Exists(ctx, "wm:ttl:last_time").Val() != 1 {
		t.Fatalf("after reset to 7: wm:ttl = %q", v)
	}
}

func keysOf(cs []apptest.Counter) []string {
	out := make([]string, len(cs))
	for i, k := range cs {
		out[i] = k.Key
	}
	return out
}
