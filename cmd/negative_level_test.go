package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestNegativeLevelSameEverywhere: a level below zero is what the owning application reads
// (Webman refills negatively from a time ahead of its clock, and denies from it), so every
// view shows that level, the same: list, inspect and watch print -2.2, and every JSON
// output (list, inspect, check) holds -2.2, never a level clamped to 0 in one place and not
// in another.
func TestNegativeLevelSameEverywhere(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now := time.UnixMicro(1_800_000_000_000_000)
	// 2 tokens stored, written 4.2 s ahead: at rate 1 Webman sees 2 - 4.2 = -2.2.
	c.Set(ctx, "neg:wm", "2", 0)
	c.Set(ctx, "neg:wm:last_time", "1800000004.2", 0)
	spec := []string{"--layout", "webman", "--capacity", "5", "--rate", "1"}

	list := tableRows(t, runAt(t, srv.URL(), &now, append([]string{"list", "--match", "neg:*"}, spec...)...).out)
	inspect := tableRows(t, runAt(t, srv.URL(), &now, append([]string{"inspect", "neg:wm"}, spec...)...).out)
	for name, rows := range map[string]map[string]map[string]string{"list": list, "inspect": inspect} {
		if got := rows["neg:wm"]["TOKENS"]; got != "-2.2" {
			t.Errorf("%s TOKENS = %q, want -2.2 (%v)", name, got, rows)
		}
	}
	w := runAt(t, srv.URL(), &now, append([]string{"watch", "neg:wm", "--count", "1"}, spec...)...)
	if got := logfmt(w.out)["tokens"]; got != "-2.2" {
		t.Errorf("watch tokens=%q, want -2.2 (%q %q)", got, w.out, w.errOut)
	}

	for _, args := range [][]string{
		{"inspect", "neg:wm", "-o", "json"},
		{"list", "--match", "neg:*", "-o", "json"},
		{"check", "neg:wm", "-o", "json"},
	} {
		r := runAt(t, srv.URL(), &now, append(args, spec...)...)
		out := strings.TrimSpace(r.out)
		if strings.HasPrefix(out, "[") {
			var rows []map[string]any
			if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
				t.Fatalf("%v: %v %q", args, err, r.out)
			}
			out = mustJSON(t, rows[0])
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v %q %q", args, err, r.out, r.errOut)
		}
		if v["tokens"] != -2.2 {
			t.Errorf("%v: tokens %v, want -2.2 (%s)", args, v["tokens"], out)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
