package cmd

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestResetThenVerify: a runbook's reset --match refills a native bucket by writing it
// full, its spec kept, so the next inspect reads it (exit 0, full) and consume needs no
// spec; another application's bucket is refilled by deleting, and inspect of it says both
// causes of a missing key.
func TestResetThenVerify(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	for _, k := range []string{"rate:user:1", "rate:user:2"} {
		if r := run(t, url, "consume", k, "--capacity", "10", "--rate", "0.01", "--cost", "7"); r.code != ExitOK {
			t.Fatalf("consume %s: exit %d %q", k, r.code, r.errOut)
		}
	}
	r := run(t, url, "reset", "--match", "rate:user:*", "--yes", "-o", "json")
	if r.code != ExitOK || strings.Count(r.out, `"action": "refill"`) != 2 {
		t.Fatalf("reset --match: exit %d %q %q", r.code, r.out, r.errOut)
	}
	for _, k := range []string{"rate:user:1", "rate:user:2"} {
		r := run(t, url, "inspect", k, "-o", "json")
		var v struct {
			Tokens   float64 `json:"tokens"`
			Capacity float64 `json:"capacity"`
			Exists   bool    `json:"exists"`
		}
		if err := json.Unmarshal([]byte(r.out), &v); err != nil || r.code != ExitOK || !v.Exists || v.Tokens != 10 || v.Capacity != 10 {
			t.Fatalf("inspect %s after the reset: exit %d %v %q %q", k, r.code, err, r.out, r.errOut)
		}
	}
	if r := run(t, url, "consume", "rate:user:1"); r.code != ExitOK {
		t.Fatalf("consume without a spec after the reset: exit %d %q", r.code, r.errOut)
	}

	c.HSet(context.Background(), "ex:1", "tokens", "3", "last_refill", "1700000000.5")
	if r := run(t, url, "reset", "ex:1", "--layout", "express", "--yes"); r.code != ExitOK || c.Exists(context.Background(), "ex:1").Val() != 0 {
		t.Fatalf("reset of an express bucket: exit %d %q", r.code, r.errOut)
	}
	r = run(t, url, "inspect", "ex:1", "--layout", "express")
	if r.code != ExitNoKey || !strings.Contains(r.errOut, "misspelt, or a bucket that expired full or was refilled by a reset that deletes") {
		t.Fatalf("inspect after a reset that deletes: exit %d %q", r.code, r.errOut)
	}
}

// TestResetNoMatch: a reset --match that matches no bucket prints no empty table header on
// stdout; stderr says no buckets match, exit 0.
func TestResetNoMatch(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	url := srv.URL()
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	for _, args := range [][]string{{"--yes"}, {"--dry-run"}, {"--yes", "-o", "json"}} {
		r := run(t, url, append([]string{"reset", "--match", "nomatch:*"}, args...)...)
		wantOut := ""
		if slices.Contains(args, "json") {
			wantOut = "[]\n"
		}
		if r.code != ExitOK || r.out != wantOut || !strings.Contains(r.errOut, `no buckets match "nomatch:*"`) {
			t.Errorf("reset --match 'nomatch:*' %v: exit %d out %q err %q", args, r.code, r.out, r.errOut)
		}
	}
	if r := run(t, url, "list", "--match", "nomatch:*"); r.code != ExitOK || r.out != "" {
		t.Errorf("list of no match: exit %d out %q", r.code, r.out)
	}
}
