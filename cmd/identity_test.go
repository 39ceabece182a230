package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// TestIdentityKeyspace: a keyspace of more than 30 look-alikes (deadlines with PXAT/EXAT
// TTLs, leases, locks, counters, foreign numerals and corrupt values in bucket-shaped
// hashes, extra fields, two-key look-alikes, other types) beside real buckets of every
// layout, each written by its application's own script or library. list marks the bare
// numbers it guesses; reset (by name, --match, with and without --tokens), consume, load
// --raw-key --yes and top's reset change no look-alike: DUMP and PTTL compared. The buckets
// (the GCRA ones declared by rules) are reset and then deleted.
func TestIdentityKeyspace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	url := srv.URL()
	writeConfig(t, seedRules()+`
  - {match: "rate:real:*", layout: redis-rate, capacity: 10, rate: 1/m}
  - {match: "throttle:real:*", layout: throttled, capacity: 10, rate: 1/m}
`)
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	looks, err := apptest.PlantLookalikes(ctx, c, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(looks) < 30 {
		t.Fatalf("only %d look-alikes", len(looks))
	}
	names := make([]string, len(looks))
	for i, l := range looks {
		names[i] = l.Key
	}
	buckets := plantBuckets(t, c, url)
	for _, g := range []gcraLib{redisRateLib(t, c, "real:1", 1, 10, time.Minute), throttledLib(t, c, "real:2", 1, 9, time.Minute)} {
		g.take(2)
		buckets = append(buckets, g.key)
	}
	start := time.Now()
	before, err := apptest.Snapshot(ctx, c, names)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := func(after string) {
		t.Helper()
		now, err := apptest.Snapshot(ctx, c, names)
		if err != nil {
			t.Fatal(err)
		}
		if ch := apptest.Changes(before, now, time.Since(start)); len(ch) > 0 {
			t.Fatalf("%s changed look-alikes: %v", after, ch)
		}
	}
	isLook := map[string]string{}
	for _, l := range looks {
		isLook[l.Key] = l.What
	}

	// list: a look-alike is never listed as a bucket; a bare number it guesses is marked.
	r := run(t, url, "list", "--match", "*", "-o", "json")
	var views []output.StateView
	if r.code != 0 || json.Unmarshal([]byte(r.out), &views) != nil {
		t.Fatalf("list: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	guessed := map[string]bool{}
	for _, v := range views {
		if what, ok := isLook[v.Key]; ok && v.Problem == "" {
			if v.LayoutGuess == "" || !strings.Contains(v.LayoutGuess, "--layout "+v.Layout) {
				t.Errorf("list shows %s (%s) as a %s bucket without marking the guess: %+v", v.Key, what, v.Layout, v)
			}
			guessed[v.Key] = true
		}
	}
	if !guessed["lock:order:7"] || !guessed["session:42:expires_at"] {
		t.Errorf("the deadlines in Unix ns are not shown as marked guesses: %v", guessed)
	}
	r = run(t, url, "list", "--match", "lock:*")
	if !strings.Contains(r.out, "throttled?") || !strings.Contains(r.out, "guess: declare --layout throttled") {
		t.Errorf("list table does not mark the guess:\n%s", r.out)
	}

	// audit reports the guesses and suggests the rule that would declare them.
	av, ar := auditJSON(t, "--url", url, "--match", "lock:*")
	if f := findingOf(av, audit.FindingUndeclared); ar.code != 0 || f == nil || f.Count != 1 ||
		!strings.Contains(f.Detail, `{match: "lock:order:*", layout: throttled`) {
		t.Errorf("audit of lock:*: exit %d, undeclared finding %+v", ar.code, f)
	}

	// By pattern: deadlines are never deleted.
	r = run(t, url, "reset", "--match", "session:*", "--yes")
	if r.code != 0 || !strings.Contains(r.errOut, "bare number") {
		t.Errorf("reset --match session:*: exit %d: %s", r.code, r.errOut)
	}
	unchanged("reset --match 'session:*' --yes")

	// By name: a lock holding its deadline is refused with exit 2 and one line saying how
	// to declare a layout; every look-alike is refused, with --tokens and without.
	r = run(t, url, "reset", "lock:order:7", "--tokens", "5", "--capacity", "20", "--rate", "1", "--yes")
	if r.code != ExitUsage || strings.Count(r.errOut, "\n") != 1 || !strings.Contains(r.errOut, "lock:order:7") ||
		!strings.Contains(r.errOut, "--layout throttled") {
		t.Errorf("reset lock:order:7 --tokens 5: exit %d: %q", r.code, r.errOut)
	}
	// A bare number that does not even look like a GCRA value (a deadline in seconds, a
	// counter) is refused the same way: exit 2, declare a layout to act on it.
	for _, k := range []string{"session:44:expires_at", "quota:acme:deadline", "lease:worker:3", "hits:today", "counter:plain", "counter:float"} {
		r := run(t, url, "reset", k, "--tokens", "2", "--capacity", "10", "--rate", "1", "--yes")
		if r.code != ExitUsage || strings.Count(r.errOut, "declare its layout with --layout or a rule") != 1 {
			t.Errorf("reset %s (%s): exit %d, want %d (undeclared bare number): %q", k, isLook[k], r.code, ExitUsage, r.errOut)
		}
	}
	for _, k := range names {
		for _, args := range [][]string{{"reset", k, "--yes"}, {"reset", k, "--tokens", "2", "--capacity", "10", "--rate", "1", "--yes"}} {
			if r := run(t, url, args...); r.code == ExitOK {
				t.Errorf("%v (%s): exit 0: %s", args, isLook[k], r.errOut)
			} else if strings.HasPrefix(k, "nat:corrupt:") && (!strings.Contains(r.errOut, "corrupt") || strings.Contains(r.errOut, "changed")) {
				t.Errorf("%v: the refusal of a corrupt bucket must say corrupt: %q", args, r.errOut)
			}
		}
		if r := run(t, url, "consume", k, "--capacity", "10", "--rate", "1"); r.code == ExitOK || r.code == ExitDenied {
			t.Errorf("consume %s (%s): exit %d", k, isLook[k], r.code)
		}
		if r := run(t, url, "load", k, "--raw-key", "--yes", "-n", "3", "-c", "1"); r.code == ExitOK {
			t.Errorf("load --raw-key --yes %s (%s): exit 0", k, isLook[k])
		}
	}
	unchanged("reset, consume and load by name")

	// top's reset of every row it shows.
	st := bucket.NewStore(c)
	snap, err := NewTopSource(st, TopParams{Match: "*"}).Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src := NewTopSource(st, TopParams{Match: "*"})
	for _, s := range snap.States {
		if _, ok := isLook[s.Key]; ok {
			if err := src.Reset(ctx, s); err == nil {
				t.Errorf("top's reset of %s (%s) succeeded", s.Key, isLook[s.Key])
			}
		}
	}
	unchanged("top's reset")

	// By pattern over everything: the buckets, and nothing else.
	bucketsBefore := dumps(t, c, buckets)
	r = run(t, url, "reset", "--match", "*", "--tokens", "3", "--capacity", "10", "--rate", "1", "--yes")
	all := 3*len(apptest.Apps) + 5 // each application's 3, native 3, one of each GCRA library
	if r.code != 0 || !strings.Contains(r.errOut, fmt.Sprintf("reset %d bucket(s)", all)) {
		t.Errorf("reset --match * --tokens 3: exit %d: %s", r.code, r.errOut)
	}
	for k, v := range dumps(t, c, buckets) {
		// A time key in whole seconds (Spring Cloud Gateway's) may be rewritten with the
		// second it held.
		if v == bucketsBefore[k] && !strings.HasSuffix(k, ".timestamp") {
			t.Errorf("reset --tokens 3 left bucket %s as it was", k)
		}
	}
	unchanged("reset --match '*' --tokens 3")
	r = run(t, url, "reset", "--match", "*", "--yes")
	if r.code != 0 || !strings.Contains(r.errOut, fmt.Sprintf("reset %d bucket(s)", all)) {
		t.Errorf("reset --match *: exit %d: %s", r.code, r.errOut)
	}
	for _, k := range buckets {
		if strings.HasPrefix(k, "bk:native:") {
			assertFull(t, c, k)
		} else if c.Exists(ctx, k).Val() != 0 {
			t.Errorf("bucket %s left after reset --match *", k)
		}
	}
	unchanged("reset --match '*'")
}

// TestStoredSpecAndTTL: flags never rewrite a stored spec (consume and load refuse a
// differing one with exit 2 naming the stored spec and how to change it), a corrupt stored
// spec is refused as corrupt, a reset's TTL covers the stored spec's refill and never
// shortens a longer TTL, and reset --capacity --rate changes the spec on purpose.
func TestStoredSpecAndTTL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	url := srv.URL()
	if r := run(t, url, "consume", "spec:k", "--capacity", "100", "--rate", "0.01"); r.code != 0 {
		t.Fatalf("consume: %+v", r)
	}
	before := dumpKey(t, c, "spec:k")
	for _, args := range [][]string{
		{"consume", "spec:k", "--capacity", "5", "--rate", "1"},
		{"consume", "spec:k", "--capacity", "5", "--rate", "1", "--cost", "50"}, // the never-allowed path
		{"load", "spec:k", "--raw-key", "--yes", "--capacity", "5", "--rate", "1", "-n", "3"},
	} {
		r := run(t, url, args...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, "stores capacity 100 and rate 0.01/s") ||
			!strings.Contains(r.errOut, "bucketctl reset 'spec:k' --capacity 5 --rate 1 --yes") {
			t.Errorf("%v: exit %d: %q", args, r.code, r.errOut)
		}
		if dumpKey(t, c, "spec:k") != before {
			t.Fatalf("%v rewrote the stored spec: %v", args, nativeFields(t, c, "spec:k"))
		}
	}
	// A spec that differs by less than a rounded figure shows: the message says what differs.
	if r := run(t, url, "consume", "spec:k", "--capacity", "100", "--rate", "0.0100001"); r.code != ExitUsage ||
		!strings.Contains(r.errOut, "stores capacity 100 and rate 0.01/s, and the given spec (100 @ 0.0100001/s) differs") {
		t.Errorf("a spec differing in a small digit: exit %d: %q", r.code, r.errOut)
	}
	if r := run(t, url, "consume", "spec:k"); r.code != 0 || hget(t, c, "spec:k", "capacity") != "100" {
		t.Errorf("consume with the stored spec: exit %d, %s", r.code, r.errOut)
	}

	// A stored capacity of -5 is corrupt: refused as such, never overwritten.
	c.HSet(ctx, "spec:bad", "tokens", "5", "ts", time.Now().UnixMicro(), "capacity", "-5", "rate", "1")
	bad := dumpKey(t, c, "spec:bad")
	for _, args := range [][]string{{"consume", "spec:bad", "--capacity", "10", "--rate", "1"}, {"reset", "spec:bad", "--yes"},
		{"reset", "spec:bad", "--tokens", "1", "--capacity", "10", "--rate", "1", "--yes"}, {"load", "spec:bad", "--raw-key", "--yes", "-n", "3"}} {
		if r := run(t, url, args...); r.code == ExitOK || !strings.Contains(r.errOut, "corrupt") {
			t.Errorf("%v: exit %d: %q", args, r.code, r.errOut)
		}
	}
	if dumpKey(t, c, "spec:bad") != bad {
		t.Fatal("a corrupt bucket was written")
	}

	// reset --empty: the TTL covers the stored spec's 10,000 s refill.
	if r := run(t, url, "reset", "spec:k", "--empty", "--yes"); r.code != 0 {
		t.Fatalf("reset --empty: %+v", r)
	}
	if ttl := c.PTTL(ctx, "spec:k").Val(); ttl < 10000*time.Second {
		t.Errorf("reset --empty of a bucket storing 100 @ 0.01/s left TTL %s, want >= 10,000 s", ttl)
	}
	// A TTL longer than the reset's own is kept.
	c.PExpire(ctx, "spec:k", 48*time.Hour)
	if r := run(t, url, "reset", "spec:k", "--tokens", "99", "--yes"); r.code != 0 {
		t.Fatalf("reset --tokens 99: %+v", r)
	}
	if ttl := c.PTTL(ctx, "spec:k").Val(); ttl < 47*time.Hour {
		t.Errorf("reset --tokens shortened a 48 h TTL to %s", ttl)
	}
	// On purpose: reset --capacity --rate writes the new spec, with a TTL for it.
	if r := run(t, url, "reset", "spec:k", "--capacity", "10", "--rate", "10", "--empty", "--yes"); r.code != 0 {
		t.Fatalf("reset with a new spec: %+v", r)
	}
	if f := nativeFields(t, c, "spec:k"); f["capacity"] != "10" || f["rate"] != "10" || f["tokens"] != "0" {
		t.Errorf("after reset --capacity 10 --rate 10 --empty: %v", f)
	}
}
