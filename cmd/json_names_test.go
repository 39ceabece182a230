package cmd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
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
	// The times of the decision, on the clock it was made on, as check and inspect print them
	// (retry_at: 7.3 tokens again, 4.6 more at 3/s).
	at := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339Nano) }
	if d["updated_at"] != at(0) || d["retry_at"] != at(1533334*time.Microsecond) || d["full_at"] != at(2433334*time.Microsecond) {
		t.Errorf("updated_at %v, retry_at %v, full_at %v: want %s, %s, %s", d["updated_at"], d["retry_at"], d["full_at"],
			at(0), at(1533334*time.Microsecond), at(2433334*time.Microsecond))
	}
	// check prints the same names.
	r = runAt(t, srv.URL(), &now, "check", "j:k", "-o", "json")
	var c map[string]any
	if err := json.Unmarshal([]byte(r.out), &c); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tokens", "remaining", "time_to_full_ms", "reset_after_ms", "retry_after_ms", "retry_at", "full_at", "updated_at"} {
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

// TestTicketFields: inspect -o json carries what a ticket needs in one command: level,
// spec, the retry-after for --cost and the time to full, as waits and as absolute RFC 3339
// times on the server's clock (here the pinned client clock), the last update and the
// counters; check -o json the same where it reads them.
func TestTicketFields(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	now := time.UnixMicro(1_800_000_000_000_000)
	if r := runAt(t, srv.URL(), &now, "consume", "t:k", "--capacity", "10", "--rate", "2", "--cost", "8"); r.code != ExitOK {
		t.Fatalf("consume: exit %d %s", r.code, r.errOut)
	}
	if r := runAt(t, srv.URL(), &now, "consume", "t:k", "--cost", "5"); r.code != ExitDenied {
		t.Fatalf("consume --cost 5 of 2 tokens: exit %d %s", r.code, r.errOut)
	}
	at := func(ms float64) string {
		return now.Add(time.Duration(ms * float64(time.Millisecond))).UTC().Format(time.RFC3339Nano)
	}
	r := runAt(t, srv.URL(), &now, "inspect", "t:k", "--cost", "5", "-o", "json")
	var in map[string]any
	if err := json.Unmarshal([]byte(r.out), &in); err != nil || r.code != ExitOK {
		t.Fatalf("inspect -o json: exit %d %v %s", r.code, err, r.out)
	}
	// 2 tokens left: 5 are there in 1.5 s, all 10 in 4 s.
	for k, want := range map[string]any{"tokens": 2.0, "capacity": 10.0, "rate": 2.0, "cost": 5.0, "retry_after_ms": 1500.0,
		"time_to_full_ms": 4000.0, "retry_at": at(1500), "full_at": at(4000), "updated_at": at(0), "allowed": 1.0, "denied": 1.0} {
		if in[k] != want {
			t.Errorf("inspect %s = %v, want %v", k, in[k], want)
		}
	}
	for _, k := range []string{"retry_at", "full_at", "updated_at"} {
		if _, err := time.Parse(time.RFC3339, in[k].(string)); err != nil {
			t.Errorf("inspect %s is not RFC 3339: %v", k, err)
		}
	}
	r = runAt(t, srv.URL(), &now, "check", "t:k", "--cost", "5", "-o", "json")
	var c map[string]any
	if err := json.Unmarshal([]byte(r.out), &c); err != nil || r.code != ExitDenied {
		t.Fatalf("check -o json: exit %d %v %s", r.code, err, r.out)
	}
	counters, _ := c["counters"].(map[string]any)
	if c["retry_at"] != at(1500) || c["full_at"] != at(4000) || c["updated_at"] != at(0) || counters["allowed"] != 1.0 || counters["denied"] != 1.0 {
		t.Errorf("check -o json: %s", r.out)
	}
	// Never: no retry_at, retry_after_ms -1.
	r = runAt(t, srv.URL(), &now, "inspect", "t:k", "--cost", "11", "-o", "json")
	in = nil
	if err := json.Unmarshal([]byte(r.out), &in); err != nil || in["retry_after_ms"] != -1.0 || in["retry_at"] != nil {
		t.Errorf("inspect --cost 11 of capacity 10: %v %s", err, r.out)
	}
}

// TestJSONFieldsDocumented: every JSON field of inspect's and check's views is named in
// 'bucketctl help formats', and inspect's in its --help too.
func TestJSONFieldsDocumented(t *testing.T) {
	t.Parallel()
	names := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			if n, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ","); n != "" && n != "-" {
				out = append(out, n)
			}
		}
		return out
	}
	formats := run(t, "", "help", "formats").out
	inspectHelp := run(t, "", "inspect", "--help").out
	for _, n := range names(output.StateView{}) {
		if !strings.Contains(formats, n) || (!strings.Contains(inspectHelp, n) && n != "layout_guess" && n != "full_at_expiry" && n != "writer_clock" && n != "ambiguous") {
			t.Errorf("inspect's JSON field %q is not documented", n)
		}
	}
	for _, n := range names(output.ResultView{}) {
		if !strings.Contains(formats, n) {
			t.Errorf("check's JSON field %q is not in 'help formats'", n)
		}
	}
}
