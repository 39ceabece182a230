package cmd

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

func TestJSONRounding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"tokens noise of 2.7", jsonTokens(10 - 7.3), 2.7},
		{"tokens noise of 10", jsonTokens(9.999999999999998), 10},
		{"tokens floored, never a token more", jsonTokens(0.99999), 0.999},
		{"tokens thousandth", jsonTokens(7.0916), 7.091},
		{"tokens whole", jsonTokens(16000), 16000},
		{"fill", jsonRatio(0.061016765949999996), 0.061},
		{"fill full", jsonRatio(0.9999999999999999), 1},
		{"rate measured", jsonRate(9.98765), 9.988},
		{"spec noise", jsonSpec(0.1 + 0.2), 0.3},
		{"spec slow rate kept", jsonSpec(0.0001), 0.0001},
		{"spec third", jsonSpec(1.0 / 3), 0.333333333},
		{"ms", ms(1234567 * time.Nanosecond), 1.234},
		{"ms 200", ms(200 * time.Millisecond), 200},
		{"ttl none", ttlMS(-1), -1},
		{"ttl no key", ttlMS(-2), -2}, // as PTTL says: -1 would read as "no TTL"
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	// JSON never fails: what encoding/json refuses becomes a finite number.
	for _, v := range []float64{jsonTokens(math.Inf(1)), jsonTokens(math.NaN()), round3(math.Inf(-1)), jsonSpec(math.NaN()), jsonTokens(1e307)} {
		if _, err := json.Marshal(v); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
	if v := jsonTokens(1e307); v != 1e307 {
		t.Errorf("jsonTokens(1e307) = %v: a large value must not be scaled", v)
	}
}

// decimals is the number of decimals v is written with in JSON.
func decimals(v float64) int {
	b, _ := json.Marshal(v)
	_, frac, ok := strings.Cut(string(b), ".")
	if !ok {
		return 0
	}
	return len(frac)
}

// TestDecisionJSONNames: consume and check print inspect's names (tokens, time_to_full_ms)
// and keep remaining and reset_after_ms as aliases holding the same values; every float of
// a decision and of inspect is rounded (no 0.061016765949999996).
func TestDecisionJSONNames(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	now := time.UnixMicro(1_800_000_000_000_000)
	r := runAt(t, srv.URL(), &now, "consume", "j:k", "--capacity", "10", "--rate", "3", "--cost", "7.3", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("consume: exit %d %s%s", r.code, r.out, r.errOut)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(r.out), &d); err != nil {
		t.Fatal(err)
	}
	if d["tokens"] != 2.7 || d["remaining"] != d["tokens"] {
		t.Errorf("tokens %v, remaining %v: want 2.7 both (10 - 7.3 without float noise)", d["tokens"], d["remaining"])
	}
	// 7.3 tokens at 3/s: 2.4333… s, to the microsecond (rounded up: full by then).
	if d["time_to_full_ms"] != 2433.334 || d["reset_after_ms"] != d["time_to_full_ms"] {
		t.Errorf("time_to_full_ms %v, reset_after_ms %v: want 2433.334 both", d["time_to_full_ms"], d["reset_after_ms"])
	}
	if _, ok := d["retry_after_ms"]; !ok {
		t.Errorf("retry_after_ms missing: %s", r.out)
	}
	// check prints the same names.
	r = runAt(t, srv.URL(), &now, "check", "j:k", "-o", "json")
	var c map[string]any
	if err := json.Unmarshal([]byte(r.out), &c); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tokens", "remaining", "time_to_full_ms", "reset_after_ms", "retry_after_ms"} {
		if _, ok := c[k]; !ok {
			t.Errorf("check -o json lacks %q: %s", k, r.out)
		}
	}
	r = runAt(t, srv.URL(), &now, "inspect", "j:k", "-o", "json")
	var in map[string]any
	if err := json.Unmarshal([]byte(r.out), &in); err != nil {
		t.Fatalf("inspect -o json: %v %s", err, r.out)
	}
	if in["fill"] != 0.27 || in["tokens"] != 2.7 || in["time_to_full_ms"] != d["time_to_full_ms"] {
		t.Errorf("inspect fill %v tokens %v time_to_full_ms %v: want 0.27, 2.7 and the decision's", in["fill"], in["tokens"], in["time_to_full_ms"])
	}
	for _, m := range []map[string]any{d, c, in} {
		for k, v := range m {
			if f, ok := v.(float64); ok && decimals(f) > 3 {
				t.Errorf("%s = %v: more than 3 decimals", k, f)
			}
		}
	}
}
