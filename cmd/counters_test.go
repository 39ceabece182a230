package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestCountersNamedInListInspectAudit: with the rule {match: "ratelimit:*", layout: webman}
// over Kong's counters (and keys of every other counter limiter, each written by its own
// script), list --all, inspect and audit name which limiter's counter each key most likely
// is, and reset KEY --tokens 50 and reset --match write nothing: no counter changed, no
// KEY:last_time made.
func TestCountersNamedInListInspectAudit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	url := srv.URL()
	writeConfig(t, "rules:\n  - {match: \"ratelimit:*\", layout: webman, capacity: 100, rate: 1}\n")
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	counters, err := apptest.PlantCounters(ctx, c, now, 3)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(counters))
	for i, k := range counters {
		keys[i] = k.Key
	}
	before, err := apptest.Snapshot(ctx, c, keys)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	named := func(form string) string {
		f, _ := bucket.LookupCounter(form)
		if f.Generic() {
			return "like " + f.Limiter
		}
		return "most likely " + f.Limiter + " (" + f.Pattern + ")"
	}

	r := run(t, url, "list", "--match", "*", "--all")
	for _, k := range counters {
		line := lineOf(r.out, k.Key)
		if !strings.Contains(line, named(k.Form)) {
			t.Errorf("list --all: %s: %q, want it named %q", k.Key, line, named(k.Form))
		}
	}
	for _, k := range counters {
		r := run(t, url, "inspect", k.Key)
		if r.code != ExitError || !strings.Contains(r.errOut, named(k.Form)) {
			t.Errorf("inspect %s: exit %d, %q; want exit 1 naming %q", k.Key, r.code, r.errOut, named(k.Form))
		}
	}
	kong := counters[0].Key
	if counters[0].Form != "kong" {
		t.Fatalf("want Kong's counter first, got %+v", counters[0])
	}
	r = run(t, url, "reset", kong, "--tokens", "50", "--yes")
	if r.code == ExitOK || !strings.Contains(r.errOut, "Kong's rate-limiting counter") {
		t.Errorf("reset %s --tokens 50 under a webman rule: exit %d %q, want refused naming Kong", kong, r.code, r.errOut)
	}
	r = run(t, url, "reset", "--match", "*", "--yes")
	if r.code != ExitOK {
		t.Errorf("reset --match '*': exit %d %s", r.code, r.errOut)
	}
	after, err := apptest.Snapshot(ctx, c, keys)
	if err != nil {
		t.Fatal(err)
	}
	if ch := apptest.Changes(before, after, time.Since(start)); len(ch) > 0 {
		t.Fatalf("counters changed: %v", ch)
	}
	if n := c.Exists(ctx, kong+":last_time").Val(); n != 0 {
		t.Fatalf("reset made %s:last_time", kong)
	}

	v, _ := auditJSON(t, "--url", url, "--match", "*")
	fd := findingOf(v, audit.FindingCounter)
	if fd == nil || fd.Count != int64(len(counters)) || !strings.Contains(fd.Detail, "Kong's rate-limiting counter") {
		t.Fatalf("audit's counter finding %+v, want all %d keys, naming Kong's", fd, len(counters))
	}
}
