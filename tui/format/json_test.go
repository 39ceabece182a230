package format

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestJSONRounding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"tokens noise of 2.7", JSONTokens(10 - 7.3), 2.7},
		{"tokens noise of 10", JSONTokens(9.999999999999998), 10},
		{"tokens floored, never a token more", JSONTokens(0.99999), 0.999},
		{"tokens thousandth", JSONTokens(7.0916), 7.091},
		{"tokens whole", JSONTokens(16000), 16000},
		{"fill", JSONRatio(0.061016765949999996), 0.061},
		{"fill full", JSONRatio(0.9999999999999999), 1},
		{"fill almost full is not full", JSONRatio(0.9996), 0.999},
		{"fill cut, not rounded", JSONRatio(0.4567), 0.456},
		{"rate measured", JSONRate(9.98765), 9.988},
		{"spec noise", JSONSpec(0.1 + 0.2), 0.3},
		{"spec slow rate kept", JSONSpec(0.0001), 0.0001},
		{"spec third", JSONSpec(1.0 / 3), 0.333333333},
		{"ms", JSONMS(1234567 * time.Nanosecond), 1.234},
		{"ms 200", JSONMS(200 * time.Millisecond), 200},
		{"retry-after never", JSONRetryAfter(-1), -1}, // JSONMS(-1) is 0: "now"
		{"retry-after never, any negative", JSONRetryAfter(-time.Second), -1},
		{"retry-after 200ms", JSONRetryAfter(200 * time.Millisecond), 200},
		{"retry-after now", JSONRetryAfter(0), 0},
		{"ttl none", JSONTTL(-1), -1},
		{"ttl no key", JSONTTL(-2), -2}, // as PTTL says: -1 would read as "no TTL"
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	// JSON never fails: what encoding/json refuses becomes a finite number.
	for _, v := range []float64{JSONTokens(math.Inf(1)), JSONTokens(math.NaN()), Round3(math.Inf(-1)), JSONSpec(math.NaN()), JSONTokens(1e307)} {
		if _, err := json.Marshal(v); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	if v := JSONTokens(1e307); v != 1e307 {
		t.Errorf("JSONTokens(1e307) = %v: a large value must not be scaled", v)
	}
}

// TestJSONNegativeLevel: a negative level (the owning application's debt) is cut toward
// zero like a level, to the thousandth, and never written as -0.
func TestJSONNegativeLevel(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{-2.2000000238, -2.2},
		{-0.0004, 0},
		{-7.0916, -7.091},
		{-16000, -16000},
	} {
		got := JSONTokens(c.in)
		if got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("JSONTokens(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if b, _ := json.Marshal(JSONTokens(-0.0004)); string(b) != "0" {
		t.Errorf("JSONTokens(-0.0004) encodes as %s, want 0", b)
	}
}
