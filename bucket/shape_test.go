package bucket_test

import (
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
)

func TestParseNumber(t *testing.T) {
	ok := map[string]float64{"5": 5, "-3.25": -3.25, "1.7000000000000001e+09": 1.7000000000000001e+09, "0": 0, ".5": 0.5, "1e-05": 1e-05}
	for s, want := range ok {
		if v, good := bucket.ParseNumber(s); !good || v != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", s, v, good, want)
		}
	}
	for _, s := range []string{"", " 5", "5 ", "0x10", "inf", "Inf", "nan", "NaN", "1_000", "five", "+", strings.Repeat("9", 65), "1e5\n"} {
		if v, good := bucket.ParseNumber(s); good {
			t.Errorf("ParseNumber(%q) = %v accepted", s, v)
		}
	}
	// An overflow is outside the grammar, and flagged so that a reader shows it as corrupt.
	if v, good := bucket.ParseNumber("1e400"); good || !bucket.NumberOverflows("1e400") {
		t.Errorf("1e400: %v %v, want refused as an overflow (shown as corrupt)", v, good)
	}
}

// TestDetectHashIsStrict: a hash is a bucket of a layout only with exactly its fields.
func TestDetectHashIsStrict(t *testing.T) {
	yes := map[string]map[string]string{
		"native-hash": {"tokens": "5", "ts": "1", "capacity": "10", "rate": "1"},
		"go-bench":    {"tokens": "5", "ts": "1700000000000"},
		"spring":      {"tokens": "5", "last_refill_time": "1700000000"},
		"multi-tier":  {"tokens": "5", "last_refill_at": "1700000000.5"},
		"express":     {"tokens": "5", "last_refill": "1700000000.5"},
	}
	for want, f := range yes {
		if l, ok := bucket.DetectHash(f); !ok || l.Name != want {
			t.Errorf("%v: detected %q %v, want %s", f, l.Name, ok, want)
		}
	}
	native := map[string]string{"tokens": "5", "ts": "1", "capacity": "10", "rate": "1", "allowed": "3", "denied": "0"}
	if l, ok := bucket.DetectHash(native); !ok || !l.Native {
		t.Errorf("native with counters: %v %v", l.Name, ok)
	}
	no := []map[string]string{
		{"tokens": "5", "ts": "1700000000000", "email": "a@x"},
		{"tokens": "5", "ts": "1", "capacity": "10", "rate": "1", "owner": "bob"},
		{"tokens": "5"},
		{"tokens": "x", "ts": "1"},
		{"tokens": "5", "last_refill_time": "1700000000.5"}, // Spring writes whole seconds
		{"tokens": "5", "last_refill": "1", "last_refill_at": "2"},
		{},
	}
	for _, f := range no {
		if l, ok := bucket.DetectHash(f); ok {
			t.Errorf("%v detected as %s", f, l.Name)
		}
	}
}

// TestClassifyLayoutFlagDoesNotMakeABucket: naming a layout says what to expect; a hash of
// another shape is still not a bucket.
func TestClassifyLayoutFlagDoesNotMakeABucket(t *testing.T) {
	l := bucket.Presets["go-bench"]
	st := bucket.ClassifyHash("k", map[string]string{"tokens": "5", "ts": "1", "email": "a"}, -1, 1e15, bucket.Target{Layout: &l})
	if !st.IsNotBucket() {
		t.Fatalf("problem %q", st.Problem)
	}
	st = bucket.ClassifyHash("k", map[string]string{"tokens": "1e400", "ts": "1"}, -1, 1e15, bucket.Target{})
	if st.Problem == "" || !strings.HasPrefix(st.Problem, "corrupt") {
		t.Fatalf("tokens 1e400: problem %q", st.Problem)
	}
	st = bucket.ClassifyHash("k", map[string]string{"tokens": "5", "ts": "99999999999999999999"}, -1, 1e15, bucket.Target{})
	if !strings.HasPrefix(st.Problem, "corrupt") {
		t.Fatalf("ts 1e20: problem %q", st.Problem)
	}
	st = bucket.ClassifyTwoKey("k", "5", "1700000000.5", -1, 1_700_000_010_000_000, bucket.Target{Spec: bucket.Spec{Capacity: 10, Rate: 1}})
	if st.Problem != "" || st.Layout.Name != "webman" || st.Tokens != 10 {
		t.Fatalf("two-key bucket: %+v", st)
	}
}
