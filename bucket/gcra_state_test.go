package bucket_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// A GCRA bucket read twice by Store.Inspect (as watch and top read it), with the library
// taking tokens in between: the derived consumption is what the library took, and the
// decision Peek predicts is the library's next answer.
func TestGCRAStatesBetweenLibraryTakes(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	st := bucket.NewStore(rdb)
	ctx := context.Background()
	for _, o := range []gcraOracle{
		redisRateOracle(t, rdb, "w:1", 10, 8, time.Hour),
		throttledOracle(t, rdb, "w:2", 10, 7, time.Hour),
	} {
		resolve := func(string) bucket.Target { return bucket.Target{Spec: o.spec, Source: "test"} }
		read := func() bucket.State {
			t.Helper()
			s, err := st.Inspect(ctx, []string{o.key}, resolve)
			if err != nil {
				t.Fatal(err)
			}
			if s[0].Problem != "" || s[0].Layout.Type != bucket.GCRA || !s[0].Detected || s[0].TAT == nil {
				t.Fatalf("%s: not read as a detected GCRA bucket: %+v", o.what, s[0])
			}
			return s[0]
		}
		o.drain(t, 2)
		prev := read()
		o.drain(t, 3)
		cur := read()
		if used, _ := bucket.TokensUsed(prev, cur); math.Abs(used-3) > 0.01 {
			t.Fatalf("%s: derived use %v, the library took 3", o.what, used)
		}
		if cur.Age() != 0 || cur.Ahead != 0 {
			t.Fatalf("%s: age %s ahead %s", o.what, cur.Age(), cur.Ahead)
		}
		// 3 tokens left (at 10/h, less than 0.01 refilled): a cost of 3 is allowed, 4 denied,
		// as the library answers.
		for cost, want := range map[int]bool{3: true, 4: false} {
			r, err := cur.Peek(float64(cost))
			if err != nil {
				t.Fatal(err)
			}
			if r.Allowed != want {
				t.Fatalf("%s: Peek(%d) allowed %v, want %v (%+v)", o.what, cost, r.Allowed, want, r)
			}
		}
		if a := o.take(4); a.allowed {
			t.Fatalf("%s: the library allowed 4 of 3", o.what)
		}
		if a := o.take(3); !a.allowed {
			t.Fatalf("%s: the library denied 3 of 3", o.what)
		}
	}
}
