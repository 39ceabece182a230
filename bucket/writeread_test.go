package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// extremeTokens are levels at the edges of what a reset may write (0 to the largest
// capacity), then random ones over every magnitude, the same on every run.
func extremeTokens() []float64 {
	vs := []float64{0, math.Copysign(0, -1), 5e-324, 2.2250738585072014e-308, 1e-300, 1e-64, 1e-63, 1e-62,
		1e-47, 1e-46, 1e-45, 1e-20, 0.1, 1.0 / 3, math.Nextafter(1, 0), 1, 2.5, 123456.789012345678,
		math.Nextafter(1e15, 0), 1e15}
	r := rand.New(rand.NewPCG(33, 1))
	for range 2000 {
		vs = append(vs, r.Float64()*math.Pow(10, float64(r.IntN(340)-324)))
	}
	return vs
}

// writerLayouts are the layouts whose levels and times Go writes: the presets that are no
// GCRA and a custom hash layout for each time unit, whole and float.
func writerLayouts() []bucket.Layout {
	var ls []bucket.Layout
	names := bucket.PresetNames()
	sort.Strings(names)
	for _, n := range names {
		if l := bucket.Presets[n]; l.Type != bucket.GCRA {
			ls = append(ls, l)
		}
	}
	for _, unit := range []bucket.TimeUnit{"s", "ms", "us"} {
		for _, float := range []bool{false, true} {
			ls = append(ls, bucket.Layout{Name: fmt.Sprintf("custom-%s-%v", unit, float), Type: bucket.Hash,
				TokensField: "t", TimeField: "at", TimeUnit: unit, FloatTime: float})
		}
	}
	return ls
}

// TestWritersReadBack: every level and time a Go writer writes is one the reader reads back
// (the number grammar, at most 64 bytes): a level as the same float, a time within the
// layout's resolution; 1e-63 tokens was written as 65 bytes of plain decimal and refused
// by every reader after.
func TestWritersReadBack(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(33, 2))
	times := []int64{0, 1, 999, 1e6, 1795428012266123, 1e17 - 1, 1e17}
	for range 2000 {
		times = append(times, r.Int64N(1e17+1))
	}
	for _, l := range writerLayouts() {
		for _, v := range extremeTokens() {
			s := l.FormatTokens(v)
			back, ok := bucket.ParseNumber(s)
			if !ok || back != v || len(s) > 64 {
				t.Fatalf("%s: FormatTokens(%v) = %q (%d bytes), read back %v %v", l.Name, v, s, len(s), back, ok)
			}
		}
		step := max(l.Step().Microseconds(), 1)
		for _, us := range times {
			s := l.FormatTime(us)
			back, err := l.ParseTime(s)
			// A float time of 10^11 s carries about 15 µs of float rounding.
			if tol := step + int64(float64(us)*1e-15); err != nil || len(s) > 64 || back > us+tol || back < us-tol {
				t.Fatalf("%s: FormatTime(%d) = %q, read back %d %v", l.Name, us, s, back, err)
			}
		}
	}
}

// TestResetWritesWhatItReads: a reset to any level, of every layout but native (the two
// GCRA ones included), leaves a bucket its readers read: the Go read finds it a bucket with
// exactly that level stored (GCRA: a level within the capacity, or no key when full), and the reset script reads
// it again on the next reset (done, not "changed since it was read").
func TestResetWritesWhatItReads(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ctx := context.Background()
	sp := bucket.Spec{Capacity: 1e15, Rate: 1e6}
	levels := append([]float64{0, 5e-324, 1e-300, 1e-63, 1e-62, 0.1, 1.0 / 3, 2.5, 1e15}, extremeTokens()[20:60]...)
	layouts := writerLayouts()
	for _, n := range []string{"redis-rate", "throttled"} {
		layouts = append(layouts, bucket.Presets[n])
	}
	for _, l := range layouts {
		for i, v := range levels {
			key := l.BucketKey(fmt.Sprintf("%sw:%s:%d", l.KeyPrefix, l.Name, i))
			if _, err := st.Reset(ctx, key, l, sp, bucket.ResetTo{Tokens: v}); (l.Name == "mennanov" || l.Name == "mennanov-legacy") && v != math.Trunc(v) {
				if !errors.Is(err, bucket.ErrInvalid) {
					t.Fatalf("%s keeps whole tokens: a reset to %v: %v", l.Name, v, err)
				}
				continue
			} else if err != nil {
				t.Fatalf("%s: reset to %v: %v", l.Name, v, err)
			}
			states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: sp} })
			if err != nil {
				t.Fatal(err)
			}
			s := states[0]
			gone := l.Type == bucket.GCRA && !s.Exists // a full GCRA bucket is no key
			switch {
			case s.Problem != "" || !s.Exists && !gone:
				t.Fatalf("%s: after a reset to %v: exists %v, problem %q", l.Name, v, s.Exists, s.Problem)
			case l.Type != bucket.GCRA && s.Stored.Tokens != v:
				t.Fatalf("%s: reset to %v, read back %v", l.Name, v, s.Stored.Tokens)
			case s.Tokens < 0 || s.Tokens > sp.Capacity:
				t.Fatalf("%s: reset to %v, reads %v tokens", l.Name, v, s.Tokens)
			}
			if n, err := st.Reset(ctx, key, l, sp, bucket.ResetTo{Tokens: v}); err != nil || n == 0 && !gone {
				t.Fatalf("%s: the second reset to %v: %d keys, %v", l.Name, v, n, err)
			}
		}
	}
}
