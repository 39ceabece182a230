package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

func writeConfig(t *testing.T, body string) {
	t.Helper()
	dir := os.Getenv("XDG_CONFIG_HOME")
	if err := os.MkdirAll(filepath.Join(dir, "bucketctl"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bucketctl", "config.yaml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRulesContextsAndLayouts: a context supplies the address, rules supply layout and spec
// by key pattern, a custom layout reads an application's own field names, flags win.
func TestRulesContextsAndLayouts(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	writeConfig(t, `
current-context: sandbox
contexts:
  sandbox: {url: "`+srv.URL()+`"}
  broken: {url: "redis://127.0.0.1:1"}
layouts:
  myapp: {type: hash, tokens_field: t, time_field: at, time_unit: ms}
rules:
  - {name: users, match: "rate:user:*", layout: express, capacity: 100, rate: 10}
  - {match: "my:*", layout: myapp, capacity: 10, rate: 1}
`)
	now := c.Time(ctx).Val()
	c.HSet(ctx, "rate:user:7", "tokens", "40", "last_refill", formatSecs(now.UnixMicro()-2_000_000))
	c.HSet(ctx, "my:1", "t", "4", "at", now.UnixMilli()-1000)

	r := run(t, "", "inspect", "rate:user:7", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("inspect via context: %d %q", r.code, r.errOut)
	}
	var v StateView
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatal(err)
	}
	if v.Layout != "express" || v.LayoutDetected || v.SpecSource != "rule users" || *v.Capacity != 100 || *v.Tokens < 59 || *v.Tokens > 61.5 {
		t.Fatalf("rule not applied: %s", r.out)
	}
	r = run(t, "", "inspect", "my:1", "-o", "json")
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || v.Layout != "myapp" || *v.Tokens < 4.9 || *v.Tokens > 5.5 {
		t.Fatalf("custom layout: %s %v", r.out, err)
	}
	// Flags win over the rule.
	r = run(t, "", "inspect", "rate:user:7", "--capacity", "50", "--rate", "1", "-o", "json")
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || *v.Capacity != 50 || v.SpecSource != "flags" {
		t.Fatalf("flags did not win: %s", r.out)
	}
	// --context selects another context; a missing one is a usage error.
	if r := run(t, "", "--context", "broken", "inspect", "x"); r.code != ExitUnreachable || !strings.Contains(r.errOut, "127.0.0.1:1") {
		t.Fatalf("--context broken: %d %q", r.code, r.errOut)
	}
	if r := run(t, "", "--context", "nope", "inspect", "x"); r.code != ExitUsage || !strings.Contains(r.errOut, "sandbox") {
		t.Fatalf("--context nope: %d %q", r.code, r.errOut)
	}
	// A broken config file is one clear line, exit 2.
	writeConfig(t, "rules: [ {match: \n")
	if r := run(t, "", "inspect", "x"); r.code != ExitUsage || !strings.Contains(r.errOut, "config.yaml") {
		t.Fatalf("broken config: %d %q", r.code, r.errOut)
	}
}

func formatSecs(us int64) string {
	b, _ := json.Marshal(float64(us) / 1e6)
	return string(b)
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		glob, key string
		want      bool
	}{
		{"rate:user:*", "rate:user:42", true},
		{"rate:user:*", "rate:users", false},
		{"rate:?", "rate:a", true},
		{"rate:[ab]", "rate:c", false},
		{"rate:[^ab]", "rate:c", true},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"/api/*", "/api/products/hot", true},
	} {
		if got := globRegexp(tc.glob).MatchString(tc.key); got != tc.want {
			t.Errorf("%q ~ %q = %v", tc.glob, tc.key, got)
		}
	}
}
