package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

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
