package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/slot"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// auditRules give every planted key its spec (capacity 10, 1 token/s; the throttled
// bucket 3/s): the libraries' own specs below.
const auditRules = `
rules:
  - {match: "rate:*", capacity: 10, rate: 1}
  - {match: "throttle:*", capacity: 10, rate: 3}
  - {match: "*", capacity: 10, rate: 1}
`

// plantHealthy writes healthy buckets of every layout, each with its own application's
// script or library, under prefix: two decisions each.
func plantHealthy(t *testing.T, c redis.UniversalClient, url []string, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for _, app := range apptest.Apps {
		key := app.Key(prefix + app.Layout + ":1")
		if app.Layout == "webman" {
			key = "{" + prefix + "webman:1}" // its two keys share a slot on a Cluster
		}
		for i := 0; i < 2; i++ {
			if _, err := app.Decide(ctx, c, key, 10, 1, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		keys = append(keys, key)
	}
	native := prefix + "native:1"
	for i := 0; i < 2; i++ {
		if r := run(t, "", append(url, "consume", native, "--capacity", "10", "--rate", "1")...); r.code != 0 {
			t.Fatalf("consume: %d %s", r.code, r.errOut)
		}
	}
	keys = append(keys, native)
	if rc, ok := c.(*redis.Client); ok {
		rr := redisRateLib(t, rc, prefix+"rr", 1, 10, time.Second)
		// 5 tokens at 3/s: 1.67 s to full, which throttled's TTL rounds down to 1 s by design.
		th := throttledLib(t, rc, prefix+"th", 3, 9, time.Second)
		rr.take(2)
		th.take(5)
		keys = append(keys, rr.key, th.key)
	}
	return keys
}

func auditJSON(t *testing.T, args ...string) (output.AuditView, result) {
	t.Helper()
	r := run(t, "", append(args, "audit", "-o", "json")...)
	var v output.AuditView
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("audit -o json (exit %d, %s): %v: %q", r.code, r.errOut, err, r.out)
	}
	return v, r
}

func findingOf(v output.AuditView, kind audit.FindingKind) *output.FindingView {
	for i := range v.Findings {
		if v.Findings[i].Kind == string(kind) {
			return &v.Findings[i]
		}
	}
	return nil
}

// checkAudit asserts every planted key is reported under its finding and no healthy key
// under any warning or error.
func checkAudit(t *testing.T, v output.AuditView, planted map[audit.FindingKind]string, healthy []string) {
	t.Helper()
	for kind, key := range planted {
		fd := findingOf(v, kind)
		if fd == nil || !contains(fd.Examples, key) {
			t.Errorf("finding %s: want %q among the examples, got %+v", kind, key, fd)
		}
	}
	for _, fd := range v.Findings {
		if _, ok := planted[audit.FindingKind(fd.Kind)]; !ok && fd.Severity != string(audit.Info) {
			t.Errorf("unexpected finding %s: %+v", fd.Kind, fd)
		}
		if fd.Severity == string(audit.Info) {
			continue
		}
		for _, h := range healthy {
			if contains(fd.Examples, h) {
				t.Errorf("healthy bucket %q reported as %s", h, fd.Kind)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAuditPlantedKeyspace: one example of each finding among healthy buckets of every
// layout; audit reports each planted key under its kind, no healthy bucket, the families and
// their memory, and exits 5 with --fail-on.
func TestAuditPlantedKeyspace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	writeConfig(t, auditRules)
	c := srv.Client(t)
	ctx := context.Background()
	url := []string{"--url", srv.URL()}
	healthy := plantHealthy(t, c, url, "ok:")
	now := time.Now()
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	secs := func(d time.Duration) string {
		return strconv.FormatFloat(float64(now.Add(d).UnixMicro())/1e6, 'f', 6, 64)
	}
	c.HSet(ctx, "bad:corrupt", "tokens", "1e999", "ts", ms)
	c.Expire(ctx, "bad:corrupt", time.Hour)
	c.HSet(ctx, "bad:over", "tokens", "50", "last_refill", secs(0)) // express, capacity 10
	c.Expire(ctx, "bad:over", time.Hour)
	c.HSet(ctx, "bad:ttlshort", "tokens", "0", "ts", ms) // go-bench: 10 s to full
	c.PExpire(ctx, "bad:ttlshort", 3*time.Second)
	c.HSet(ctx, "bad:ahead", "tokens", "5", "last_refill_at", secs(30*time.Second)) // multi-tier
	c.Expire(ctx, "bad:ahead", time.Hour)
	c.HSet(ctx, "bad:nottl", "tokens", "5", "last_refill", secs(0)) // express without its TTL
	c.HSet(ctx, "bad:extra", "tokens", "5", "ts", ms, "owner", "billing")
	c.Set(ctx, "hits:today", "12345", 0) // an application counter: no finding
	planted := map[audit.FindingKind]string{
		audit.FindingCorrupt: "bad:corrupt", audit.FindingOverCapacity: "bad:over",
		audit.FindingTTLShort: "bad:ttlshort", audit.FindingClockAhead: "bad:ahead",
		audit.FindingNoTTL: "bad:nottl", audit.FindingExtraFields: "bad:extra",
	}

	v, r := auditJSON(t, url...)
	if r.code != 0 {
		t.Fatalf("audit without --fail-on: exit %d: %s", r.code, r.errOut)
	}
	checkAudit(t, v, planted, append(healthy, "hits:today"))
	if fd := findingOf(v, audit.FindingClockAhead); fd == nil || fd.MaxAheadMS == nil || *fd.MaxAheadMS < 25000 || *fd.MaxAheadMS > 31000 {
		t.Errorf("clock-ahead: want ~30 s ahead, got %+v", fd)
	}
	if fd := findingOf(v, audit.FindingNoTTLByDesign); fd == nil || !contains(fd.Examples, "{ok:webman:1}") {
		t.Errorf("webman's missing TTL: want an info finding, got %+v", fd)
	}
	fams := map[string]output.FamilyView{}
	for _, fm := range v.Families {
		fams[fm.Prefix] = fm
	}
	if fm := fams["bad"]; fm.Keys != 6 || fm.MemoryBytes <= 0 {
		t.Errorf("family bad: want 6 keys with memory, got %+v", fm)
	}
	for _, l := range []string{"native", "go-bench", "spring", "multi-tier", "express"} {
		if fm := fams["ok:"+l]; fm.Buckets != 1 || fm.Layouts[l] != 1 || fm.MemoryBytes <= 0 {
			t.Errorf("family ok:%s: want one %s bucket with memory, got %+v", l, l, fm)
		}
	}
	if fm := fams["rate:ok"]; fm.Layouts["redis-rate"] != 1 {
		t.Errorf("family rate:ok: want a redis-rate bucket, got %+v", fm)
	}

	for _, sev := range []string{"warning", "error"} {
		r := run(t, "", append(url, "audit", "--fail-on", sev)...)
		if r.code != ExitFindings || !strings.Contains(r.errOut, "at or above "+sev) {
			t.Fatalf("--fail-on %s: exit %d, want %d: %s", sev, r.code, ExitFindings, r.errOut)
		}
		if !strings.Contains(r.out, "ttl-short") || !strings.Contains(r.out, "bad:ttlshort") {
			t.Fatalf("table: want the findings with examples: %s", r.out)
		}
	}
	// The healthy buckets alone pass the strictest gate (webman's no TTL is by design: info).
	if r := run(t, "", append(url, "audit", "--match", "*ok*", "--fail-on", "warning")...); r.code != 0 {
		t.Fatalf("healthy buckets: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	if r := run(t, "", append(url, "audit", "-o", "yaml")...); r.code != 0 ||
		!strings.Contains(r.out, "- kind: ttl-short") || !strings.Contains(r.out, "- bad:ttlshort") {
		t.Fatalf("-o yaml: exit %d: %s", r.code, r.out)
	}
	if r := run(t, "", append(url, "audit", "--fail-on", "fatal")...); r.code != ExitUsage {
		t.Fatalf("--fail-on fatal: exit %d, want %d", r.code, ExitUsage)
	}
}

// TestAuditCluster: on a 3-master Cluster, a two-key bucket whose keys hash to different
// slots and a family under one {hash tag} are reported; spread and tagged-per-user buckets
// are not.
func TestAuditCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	writeConfig(t, auditRules)
	cc := cl.Client(t)
	ctx := context.Background()
	seeds := []string{"--cluster", strings.Join(cl.Addrs(), ",")}
	healthy := plantHealthy(t, cc, seeds, "ok:")
	var express apptest.App
	for _, a := range apptest.Apps {
		if a.Layout == "express" {
			express = a
		}
	}
	for i := 0; i < 20; i++ {
		for _, k := range []string{fmt.Sprintf("{tenant:9}:rate:user:%d", i), fmt.Sprintf("spread:user:%d", i)} {
			if _, err := express.Decide(ctx, cc, k, 10, 1, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		healthy = append(healthy, fmt.Sprintf("spread:user:%d", i))
	}
	cross := ""
	for i := 0; cross == ""; i++ {
		if k := fmt.Sprintf("xs:user:%d", i); slot.Of(k) != slot.Of(k+":last_time") {
			cross = k
		}
	}
	now := strconv.FormatFloat(float64(time.Now().UnixMicro())/1e6, 'f', 6, 64)
	cc.Set(ctx, cross, "7", 0)
	cc.Set(ctx, cross+":last_time", now, 0)
	planted := map[audit.FindingKind]string{audit.FindingCrossSlot: cross, audit.FindingHotSlot: "{tenant:9}:rate:user"}

	v, r := auditJSON(t, seeds...)
	if r.code != 0 {
		t.Fatalf("audit: exit %d: %s", r.code, r.errOut)
	}
	checkAudit(t, v, planted, healthy)
	if fd := findingOf(v, audit.FindingHotSlot); fd == nil || fd.Count != 1 || !strings.Contains(fd.Detail, "20 of 20") {
		t.Errorf("hot-slot: want the one tagged family, 20 of 20 in one slot: %+v", fd)
	}
	if r := run(t, "", append(seeds, "audit", "--fail-on", "error")...); r.code != ExitFindings {
		t.Fatalf("--fail-on error with a cross-slot bucket: exit %d: %s", r.code, r.errOut)
	}
}

// TestAuditReadOnlyACL: the read-only ACL (no MEMORY) audits everything but memory, and says so.
func TestAuditReadOnlyACL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACL("ops-ro >ro-pass "+aclReadOnly))
	c := srv.Client(t)
	c.HSet(context.Background(), "bad:nottl", "tokens", "5", "last_refill", "1700000000.5")
	setEnv(t, "BUCKETCTL_PASSWORD", "ro-pass")
	r := run(t, srv.URL(), "--user", "ops-ro", "audit", "-o", "json", "--capacity", "10", "--rate", "1")
	var v output.AuditView
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || r.code != 0 {
		t.Fatalf("audit as ops-ro: exit %d %v: %s %s", r.code, err, r.out, r.errOut)
	}
	if fd := findingOf(v, audit.FindingNoTTL); fd == nil || fd.Examples[0] != "bad:nottl" || fd.MemoryBytes != 0 {
		t.Fatalf("no-ttl without memory: %+v", fd)
	}
	if !strings.Contains(r.errOut, "MEMORY USAGE") {
		t.Fatalf("want a note that memory is not estimated: %q", r.errOut)
	}
}
