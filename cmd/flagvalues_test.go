package cmd

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestValuesInTheUsersWords: rates and durations are taken as the views print them, and a
// value that does not parse is one line naming the flag, the value and a valid example,
// with nothing of Go's parsers and nothing sent to Redis (exit 2).
func TestValuesInTheUsersWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"consume", "k", "--capacity", "10", "--rate", "abc"}, `bucketctl: --rate "abc": not a rate; write it as 5, 5/s, 300/m or 0.5/h`},
		{[]string{"check", "k", "--capacity", "10", "--rate", "5/x"}, `bucketctl: --rate "5/x": unknown unit /x; write it as 5, 5/s, 300/m or 0.5/h`},
		{[]string{"load", "api", "--duration", "3"}, `bucketctl: --duration "3": a duration needs a unit; write it as 3s`},
		{[]string{"watch", "k", "-i", "fast"}, `bucketctl: --interval "fast": not a duration; write it as 3s, 500ms or 1m30s`},
		{[]string{"inspect", "k", "--timeout", "3"}, `bucketctl: --timeout "3": a duration needs a unit; write it as 3s`},
		{[]string{"consume", "k", "--capacity", "ten", "--rate", "5"}, `bucketctl: --capacity "ten": not a number; write it as 10, 2.5, 1,000, 10k or 1e6`},
		{[]string{"list", "--limit", "many"}, `bucketctl: --limit "many": not a whole number; write it as 10, 1,000 or 10k`},
		// One grammar for every number typed: no other base, no padding, no silent 0.
		{[]string{"list", "--limit", "0100"}, `bucketctl: --limit "0100": a leading zero (other tools read 0100 as octal); write it as 10, 1,000 or 10k`},
		{[]string{"load", "api", "-c", "0x10"}, `bucketctl: --concurrency "0x10": not a whole number; write it as 10, 1,000 or 10k`},
		{[]string{"list", "--limit", "1_0"}, `bucketctl: --limit "1_0": not a whole number; write it as 10, 1,000 or 10k`},
		{[]string{"list", "--limit", "2.5"}, `bucketctl: --limit "2.5": not a whole number; write it as 10, 1,000 or 10k`},
		{[]string{"consume", "k", "--capacity", "1 ", "--rate", "5"}, `bucketctl: --capacity "1 ": a space in a number; write it as 10, 2.5, 1,000, 10k or 1e6`},
		{[]string{"consume", "k", "--capacity", "10", "--rate", "\t5"}, `bucketctl: --rate "\t5": a space in a number; write it as 5, 5/s, 300/m or 0.5/h`},
		{[]string{"watch", "k", "-i", "5 s"}, `bucketctl: --interval "5 s": a space in a duration; write it as 3s, 500ms or 1m30s`},
		{[]string{"consume", "k", "--capacity", "10", "--rate", "5", "--cost", "1e-400"}, `bucketctl: --cost "1e-400": too small: it rounds to 0; write it as 10, 2.5, 1,000, 10k or 1e6`},
		{[]string{"inspect", "k", "--timeout", "2562047h"}, `bucketctl: --timeout "2562047h": over a year (8760h); write it as 3s, 500ms or 1m30s`},
		{[]string{"reset", "k", "--layout", "express", "--capacity", "10", "--rate", "1", "--tokens", "0." + strings.Repeat("0", 62) + "1", "--yes"},
			`bucketctl: --tokens "0.` + strings.Repeat("0", 62) + `1": longer than 64 characters; write it as 10, 2.5, 1,000, 10k or 1e6`},
	} {
		// An address nothing listens on: a value that reached Redis would be exit 3.
		r := run(t, "127.0.0.1:1", c.args...)
		if r.code != ExitUsage || strings.TrimRight(r.errOut, "\n") != c.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, r.code, r.errOut, c.want)
		}
	}
}

// TestFlagBounds: a value out of a flag's bounds is one line naming the flag, the value and
// the bound, exit 2, before anything reaches Redis.
func TestFlagBounds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"top", "-i", "20ms"}, "bucketctl: --interval 20ms: must be at least 50ms"},
		{[]string{"top", "--page-size", "0"}, "bucketctl: --page-size 0: must be at least 1"},
		{[]string{"top", "--limit", "-1"}, "bucketctl: --limit -1: must be >= 0 (0 = no limit)"},
		{[]string{"top", "--duration", "-1s"}, "bucketctl: --duration -1s: must be >= 0 (0 = until stopped)"},
		{[]string{"top", "--budget", "99"}, "bucketctl: --budget 99: must be at least 100 commands per second"},
		{[]string{"watch", "k", "-i", "5ms"}, "bucketctl: --interval 5ms: must be at least 10ms"},
		{[]string{"watch", "k", "--count", "-2"}, "bucketctl: --count -2: must be >= 0 (0 = until stopped)"},
		{[]string{"load", "api", "--concurrency", "0"}, "bucketctl: --concurrency 0: must be at least 1"},
		{[]string{"load", "api", "--watch-retries", "0"}, "bucketctl: --watch-retries 0: must be at least 1"},
		{[]string{"audit", "--limit", "-3"}, "bucketctl: --limit -3: must be >= 0 (0 = no limit)"},
		{[]string{"list", "--limit", "-1"}, "bucketctl: --limit -1: must be >= 0 (0 = no limit)"},
	} {
		// An address nothing listens on: a value that reached Redis would be exit 3.
		r := run(t, "127.0.0.1:1", c.args...)
		if r.code != ExitUsage || strings.TrimRight(r.errOut, "\n") != c.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, r.code, r.errOut, c.want)
		}
	}
}

// TestRatesAsTheViewsPrintThem: consume --rate 300/m stores 5 tokens a second, as --rate 5.
func TestRatesAsTheViewsPrintThem(t *testing.T) {
	srv := redistest.Start(t)
	for _, rate := range []string{"5", "5/s", "300/m", "300/min", "18000/h"} {
		key := "rate:" + rate
		r := run(t, srv.Addr(), "consume", key, "--capacity", "10", "--rate", rate, "-o", "json")
		if r.code != 0 || !strings.Contains(r.out, `"rate": 5,`) {
			t.Errorf("--rate %s: exit %d, %s%s", rate, r.code, r.out, r.errOut)
		}
	}
	// A duration with its unit runs; the bare number is refused above.
	r := run(t, srv.Addr(), "watch", "rate:5", "-n", "1", "-i", "100ms", "--duration", (2 * time.Second).String())
	if r.code != 0 {
		t.Errorf("watch -i 100ms: exit %d: %s", r.code, r.errOut)
	}
}

// TestConfigRateAsTyped: a rule's rate is read by the same parser as --rate.
func TestConfigRateAsTyped(t *testing.T) {
	dir := t.TempDir()
	write := func(name, rate string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte("rules:\n  - {match: \"rate:*\", layout: express, capacity: 100, rate: "+rate+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r := run(t, "", "--config", write("ok.yaml", "600/m"), "config", "view", "-o", "json")
	if r.code != 0 || !strings.Contains(r.out, `"rate": 10`) {
		t.Errorf("rate: 600/m: exit %d, %s%s", r.code, r.out, r.errOut)
	}
	r = run(t, "127.0.0.1:1", "--config", write("bad.yaml", "fast"), "inspect", "rate:x")
	want := `line 2: rate "fast": not a rate; write it as 5, 5/s, 300/m or 0.5/h`
	if r.code != ExitUsage || !strings.Contains(r.errOut, want) || strings.Count(r.errOut, "\n") != 1 {
		t.Errorf("rate: fast: exit %d, %q; want exit 2 and %q", r.code, r.errOut, want)
	}
}

// TestConfigNumbersAsTyped: a rule's capacity and cost are read by the flags' parser: the
// documented forms (10k, 1,000) are accepted, and 0100 (read as 64) and 0x10 (16) are
// refused, exit 2 with the line and column, before anything reaches Redis.
func TestConfigNumbersAsTyped(t *testing.T) {
	dir := t.TempDir()
	write := func(name, field string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte("rules:\n  - {match: \"rate:*\", layout: express, rate: 5, "+field+"}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for field, want := range map[string]string{"capacity: 10k": `"capacity": 10000`, `capacity: "1,000", cost: 2.5`: `"cost": 2.5`} {
		if r := run(t, "", "--config", write("ok.yaml", field), "config", "view", "-o", "json"); r.code != ExitOK || !strings.Contains(r.out, want) {
			t.Errorf("%s: exit %d, %s%s", field, r.code, r.out, r.errOut)
		}
	}
	for field, want := range map[string]string{
		"capacity: 0100":          `line 2, column 59: "0100": a leading zero`,
		"capacity: 0x10":          `line 2, column 59: "0x10": not a number`,
		"capacity: 10, cost: 1_0": `"1_0": not a number`,
		`capacity: "5 "`:          `"5 ": a space in a number`,
		"capacity: [5]":           "line 2, column 59: want a number",
	} {
		r := run(t, "127.0.0.1:1", "--config", write("bad.yaml", field), "inspect", "rate:x")
		if r.code != ExitUsage || !strings.Contains(r.errOut, want) || !strings.Contains(r.errOut, "bad.yaml") {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", field, r.code, r.errOut, want)
			continue
		}
		oneLine(t, r)
	}
}
