package bucket_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// The native script's common path reads a bucket in the order it writes one and checks its
// values with one pattern; everything else goes through the grammar field by field. Each
// case here is a hash written by hand: the values the common path must not take at face
// value are refused (and left byte for byte), and the forms it leaves to the slow path
// (another field order, a value in exponent form, no counters) are still decided exactly,
// alone and in a batch of coalesced Takes.
func TestStoredValuesCheckedOnEveryPath(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := ctxT(t)
	st := bucket.NewStore(c, bucket.WithCoalescing(0))
	// ts a minute ahead of the server: the level is the stored one, whatever the call's time.
	ahead := strconv.FormatInt(time.Now().Add(time.Minute).UnixMicro(), 10)
	bucketAt := func(pairs ...string) []string {
		// tokens, ts, a counter, capacity, rate, the other counter: the script's own order.
		base := map[string]string{"tokens": "7.5", "ts": ahead, "allowed": "3", "capacity": "10", "rate": "1", "denied": "2"}
		for i := 0; i < len(pairs); i += 2 {
			base[pairs[i]] = pairs[i+1]
		}
		out := []string{}
		for _, f := range []string{"tokens", "ts", "allowed", "capacity", "rate", "denied"} {
			if v, ok := base[f]; ok && v != "-" {
				out = append(out, f, v)
			}
		}
		return out
	}
	refused := []struct {
		name   string
		fields []string
		want   error
	}{
		{"rate overflows", bucketAt("rate", "1e999"), bucket.ErrCorrupt},
		{"tokens overflow", bucketAt("tokens", "1e999"), bucket.ErrCorrupt},
		{"negative tokens", bucketAt("tokens", "-1"), bucket.ErrCorrupt},
		{"negative counter", bucketAt("denied", "-2"), bucket.ErrCorrupt},
		{"counter beyond 2^53", bucketAt("allowed", "9007199254740994"), bucket.ErrCorrupt},
		{"tokens beyond any capacity", bucketAt("tokens", "2e15"), bucket.ErrCorrupt},
		{"time a fraction below zero", bucketAt("ts", "-0.4"), bucket.ErrCorrupt},
		{"time past 1e17", bucketAt("ts", "2e17"), bucket.ErrCorrupt},
		{"hex time", bucketAt("ts", "0x10"), bucket.ErrForeign},
		{"padded rate", bucketAt("rate", " 1"), bucket.ErrForeign},
		{"two dots", bucketAt("tokens", "1.2.3"), bucket.ErrForeign},
		{"a lone dot", bucketAt("tokens", "."), bucket.ErrForeign},
		{"65 digits", bucketAt("capacity", "0000000000000000000000000000000000000000000000000000000000000000010"), bucket.ErrForeign},
		{"NUL inside", bucketAt("tokens", "5\x00 9"), bucket.ErrForeign},
		{"capacity missing", bucketAt("capacity", "-"), bucket.ErrForeign},
		{"another field too", append(bucketAt(), "owner", "ann"), bucket.ErrForeign},
		{"no bucket field at all", []string{"name", "ann", "email", "ann@example.com"}, bucket.ErrWrongType},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			key := "stored:" + strings.ReplaceAll(tc.name, " ", "-")
			if err := c.HSet(ctx, key, tc.fields).Err(); err != nil {
				t.Fatal(err)
			}
			before := dump(t, c, key)
			_, err := st.Take(ctx, key, spec(10, 1), 1)
			if !errors.Is(err, tc.want) {
				t.Errorf("Take: %v, want %v", err, tc.want)
			}
			if dump(t, c, key) != before {
				t.Errorf("a refused bucket was written")
			}
			// What the script refuses as corrupt, a read shows as corrupt: one range rule.
			if tc.want == bucket.ErrCorrupt {
				states, err := st.Inspect(ctx, []string{key}, nil)
				if err != nil || !strings.HasPrefix(states[0].Problem, "corrupt") {
					t.Errorf("Inspect: %+v, %v; want the bucket shown as corrupt", states, err)
				}
			}
		})
	}

	// Decided exactly from the stored level 7.5 (the stored time is ahead: no refill).
	decided := []struct {
		name   string
		fields []string
		tokens string // the level before the take
	}{
		{"the script's order", bucketAt(), "7.5"},
		{"fields in another order", []string{"rate", "1", "denied", "2", "tokens", "7.5", "capacity", "10", "ts", ahead, "allowed", "3"}, "7.5"},
		{"tokens in exponent form", bucketAt("tokens", "7.5e0"), "7.5"},
		{"no counters", bucketAt("allowed", "-", "denied", "-"), "7.5"},
		{"long counter", bucketAt("allowed", "900719925474099", "denied", "123456789012345"), "7.5"},
	}
	for _, tc := range decided {
		t.Run(tc.name, func(t *testing.T) {
			key := "stored:" + strings.ReplaceAll(tc.name, " ", "-")
			if err := c.HSet(ctx, key, tc.fields).Err(); err != nil {
				t.Fatal(err)
			}
			r, err := st.Take(ctx, key, spec(10, 1), 1)
			if err != nil || !r.Allowed || r.Remaining != 6.5 {
				t.Fatalf("Take: %+v, %v; want allowed with 6.5 left", r, err)
			}
			if got := nativeOf(t, c, key).Tokens; got != 6.5 {
				t.Fatalf("stored tokens %v, want 6.5", got)
			}
		})
	}
}

// A batch (one EVALSHA over several keys, as the Store sends coalesced Takes) decides each
// key as a lone call would, refusing a corrupt one in its place, and replies with four
// elements per key.
func TestBatchDecidesEachKeyAlone(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := ctxT(t)
	ahead := strconv.FormatInt(time.Now().Add(time.Minute).UnixMicro(), 10)
	c.HSet(ctx, "b:corrupt", "tokens", "5", "ts", ahead, "capacity", "10", "rate", "1e999")
	c.HSet(ctx, "b:exp", "tokens", "2.5e0", "ts", ahead, "capacity", "10", "rate", "1")
	before := dump(t, c, "b:corrupt")
	st := bucket.NewStore(c)
	if _, _, err := st.LoadScript(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := c.EvalSha(ctx, st.SHA(), []string{"b:new", "b:corrupt", "b:exp", "b:exp"},
		"10", "1", "1", "", "", "", "", "10", "1", "1", "10", "1", "2", "10", "1", "1").Slice()
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 4 {
		t.Fatalf("batch reply %v: want one record per key", v)
	}
	want := []struct {
		allowed   bool
		remaining float64
	}{{true, 9}, {}, {true, 0.5}, {false, 0.5}}
	for i, w := range want {
		if i == 1 {
			if e, ok := v[1].(error); !ok || !strings.Contains(e.Error(), "corrupt bucket") {
				t.Errorf("decision 2: %v, want a corrupt-bucket error", v[1])
			}
			continue
		}
		r, err := bucket.NativeReply(v[i], spec(10, 1), []float64{1, 1, 2, 1}[i])
		if err != nil || r.Allowed != w.allowed || r.Remaining != w.remaining {
			t.Errorf("decision %d: %+v %v, want allowed %v with %v left", i+1, r, err, w.allowed, w.remaining)
		}
	}
	if dump(t, c, "b:corrupt") != before {
		t.Error("the corrupt bucket was written")
	}
}
