package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

func writeConfig(t *testing.T, body string) {
	t.Helper()
	dir := getEnv(t, "XDG_CONFIG_HOME")
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
	t.Parallel()
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
	var v output.StateView
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

// TestConfigStrict: a key that names no field is exit 2 naming the file, the line, the
// field and the closest known name; so is a context that does not exist and a
// password-env naming an unset variable. Nothing is dialled.
func TestConfigStrict(t *testing.T) {
	t.Parallel()
	envOf(t) // the subtests write the config file where the test reads it after them
	for _, tc := range []struct {
		name, body string
		args       []string
		wants      []string
	}{
		{"typo in a context", "current-context: local\ncontexts:\n  local:\n    uri: redis://127.0.0.1:1\n", nil,
			[]string{"config.yaml, line 4", `unknown field "uri" in context "local"`, `did you mean "url"?`}},
		{"typo at the top", "curent-context: local\n", nil,
			[]string{"line 1", `"curent-context"`, `did you mean "current-context"?`}},
		{"typo in a rule", "rules:\n  - {match: \"a:*\", capasity: 3, rate: 1}\n", nil,
			[]string{"line 2", `"capasity" in rule 1`, `did you mean "capacity"?`}},
		{"typo in a layout", "layouts:\n  l: {type: hash, tokens_feld: t, time_field: at, time_unit: ms}\n", nil,
			[]string{"line 2", `"tokens_feld" in layout "l"`, `did you mean "tokens_field"?`}},
		{"far from every field", "contexts:\n  c: {zzzzzz: 1}\n", nil,
			[]string{"line 2", `unknown field "zzzzzz"`, "known: cluster, "}},
		{"missing current context", "current-context: nope\ncontexts:\n  local: {url: \"redis://127.0.0.1:1\"}\n", nil,
			[]string{`context "nope" not found`, "known: local"}},
		{"missing --context", "contexts:\n  local: {url: \"redis://127.0.0.1:1\"}\n", []string{"--context", "locl"},
			[]string{`context "locl" not found`, `did you mean "local"?`}},
		{"unset password-env", "contexts:\n  prod: {url: \"redis://127.0.0.1:1\", password-env: BUCKETCTL_TEST_UNSET_PW}\n", []string{"--context", "prod"},
			[]string{"BUCKETCTL_TEST_UNSET_PW", "not set", "password-env"}},
		{"unset sentinel-password-env", "contexts:\n  s: {sentinel-master: m, sentinel-addrs: [\"127.0.0.1:1\"], sentinel-password-env: BUCKETCTL_TEST_UNSET_SPW}\n", []string{"--context", "s"},
			[]string{"BUCKETCTL_TEST_UNSET_SPW", "sentinel-password-env"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeConfig(t, tc.body)
			r := run(t, "", append(tc.args, "inspect", "x")...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want 2: %q", r.code, r.errOut)
			}
			for _, w := range tc.wants {
				if !strings.Contains(r.errOut, w) {
					t.Fatalf("stderr lacks %q: %q", w, r.errOut)
				}
			}
			oneLine(t, r)
		})
	}
	// --context without any config file says how to make one.
	if err := os.Remove(filepath.Join(getEnv(t, "XDG_CONFIG_HOME"), "bucketctl", "config.yaml")); err != nil {
		t.Fatal(err)
	}
	if r := run(t, "", "--context", "x", "inspect", "k"); r.code != ExitUsage || !strings.Contains(r.errOut, "no config file") {
		t.Fatalf("--context without a file: %d %q", r.code, r.errOut)
	}
}
