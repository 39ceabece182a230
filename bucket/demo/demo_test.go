package demo

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestAppsWriteTheirOwnLayouts: each application's script writes a bucket bucketctl
// recognises as that application's layout, and throttles by its own algorithm.
func TestAppsWriteTheirOwnLayouts(t *testing.T) {
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ctx := context.Background()
	spec := bucket.Spec{Capacity: 5, Rate: 0.5}
	for name, app := range Apps {
		key := app.Key("apps:" + name)
		allowed, denied := 0, 0
		for i := 0; i < 8; i++ {
			ok, err := app.Take(ctx, st.Redis(), key, spec, time.Now())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ok {
				allowed++
			} else {
				denied++
			}
		}
		if allowed != 5 || denied != 3 {
			t.Errorf("%s: %d allowed, %d denied of 8 at capacity 5, want 5 and 3", name, allowed, denied)
		}
		// Detected from the bucket's own shape, with the spec from a rule.
		states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Spec: spec} })
		if err != nil {
			t.Fatal(err)
		}
		s := states[0]
		if s.Problem != "" || !s.Exists || s.Layout.Name != app.Layout {
			t.Errorf("%s: read as layout %q (problem %q, exists %v)", name, s.Layout.Name, s.Problem, s.Exists)
		}
		if s.Tokens > 1.5 { // drained: 0, plus what refilled since (0.5/s; Spring in whole seconds)
			t.Errorf("%s: %v tokens after draining", name, s.Tokens)
		}
	}
}

func TestSeedAndResolver(t *testing.T) {
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ctx := context.Background()
	keys := Keys("seed:")
	if err := Seed(ctx, st, keys); err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Key
	}
	states, err := st.Inspect(ctx, names, Resolver(keys))
	if err != nil {
		t.Fatal(err)
	}
	layouts := map[string]bool{}
	for i, s := range states {
		k := keys[i]
		layouts[s.Layout.Name] = true
		if k.Start == 0 {
			continue
		}
		if !s.Exists || s.Spec != k.Spec || math.Abs(s.Tokens-k.Start) > 2 {
			t.Errorf("%s: seeded %v, read %v tokens (exists %v, spec %+v)", k.Key, k.Start, s.Tokens, s.Exists, s.Spec)
		}
	}
	for _, l := range bucket.PresetNames() {
		// The GCRA layouts are libraries', not applications.
		if p := bucket.Presets[l]; !p.Native && p.Type != bucket.GCRA && Apps[l] == nil {
			t.Errorf("the demo has no application for layout %s", l)
		}
	}
	for name := range Apps {
		if !layouts[name] {
			t.Errorf("no demo key of layout %s", name)
		}
	}
}

// TestThrottlesWithinSeconds: the demo's hot key is denied within the first 5 s.
func TestThrottlesWithinSeconds(t *testing.T) {
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hot := Keys("hot:")[0]
	done := make(chan struct{})
	go func() {
		defer close(done)
		hot.Drive(ctx, st, 1)
	}()
	redistest.WaitFor(t, 5*time.Second, "a denial of "+hot.Key, func() bool { return hot.Denied.Load() > 0 })
	cancel()
	<-done
	if hot.Allowed.Load() < int64(hot.Spec.Capacity) || hot.Errors.Load() != 0 {
		t.Errorf("%d allowed, %d errors: want the burst allowed first, no errors", hot.Allowed.Load(), hot.Errors.Load())
	}
}
