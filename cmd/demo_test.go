package cmd

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/selfcmd"
)

// TestDemoShowsItsSandboxWhileRunning: on a terminal the live view itself names the
// sandbox, its URL and a command to try, while the sandbox is up (not only on stderr,
// which the full-screen view hides until it ends).
func TestDemoShowsItsSandboxWhileRunning(t *testing.T) {
	t.Parallel()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ios := &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut, StdoutTTY: true, NoColor: true}
	code := Run(context.Background(), newTestFactory(t, ios, VersionInfo{Version: "test"}),
		[]string{"demo", "--in-process", "--duration", "1500ms"})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	screen := ansi.Strip(out.String())
	// The command is on a line of its own, whole, at 80 columns.
	// (This test's binary has a long path: the server goes in the environment on a line of
	// its own; see TestDemoTry.)
	cmdLine := regexp.MustCompile(`(?m)^\s*export BUCKETCTL_URL=127\.0\.0\.1:\d+\s*\n\s*` + regexp.QuoteMeta(selfcmd.Current()) + ` inspect demo:api:scraper:203\.0\.113\.9\s*$`)
	if !cmdLine.MatchString(screen) {
		t.Errorf("the live demo never showed the command to try on a line of its own:\n%s", screen)
	}
	for _, want := range []string{"bucketctl top", "(demo sandbox)", "try this in another terminal:"} {
		if !strings.Contains(strings.Join(strings.Fields(screen), " "), want) {
			t.Errorf("the live demo never showed %q:\n%s", want, screen)
		}
	}
	// Once the sandbox is gone, nothing on the terminal names it as a thing to try.
	if e := errOut.String(); strings.Contains(e, "try this") || strings.Contains(e, "127.0.0.1") || !strings.Contains(e, "sandbox stopped") {
		t.Errorf("after the demo, stderr says %q", e)
	}
}

// TestDemoTry: the command to try is one line when it fits 80 columns, else the server
// goes in the environment on a line of its own.
func TestDemoTry(t *testing.T) {
	key := "demo:api:scraper:203.0.113.9"
	if got, want := demoTry("go run .", "127.0.0.1:39907", key), "try this in another terminal:\n  go run . --url 127.0.0.1:39907 inspect "+key; got != want {
		t.Errorf("short: %q, want %q", got, want)
	}
	long := "/home/someone/src/github.com/bucketctl/bucketctl/bin/bucketctl"
	got := demoTry(long, "127.0.0.1:39907", key)
	if want := "try this in another terminal:\n  export BUCKETCTL_URL=127.0.0.1:39907\n  " + long + " inspect " + key; got != want {
		t.Errorf("long: %q, want %q", got, want)
	}
}

// TestLiveViewsNameTheirServer: top and watch on a terminal name the server and the
// context they read.
func TestLiveViewsNameTheirServer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	writeConfig(t, "current-context: prod-eu\ncontexts:\n  prod-eu: {url: \""+srv.URL()+"\"}\n")
	for _, args := range [][]string{
		{"watch", "w:k", "--capacity", "5", "--rate", "1", "--duration", "300ms"},
		{"top", "--match", "w:*", "--duration", "300ms"},
	} {
		out, errOut := &syncBuffer{}, &syncBuffer{}
		ios := &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut, StdoutTTY: true, NoColor: true}
		if code := Run(context.Background(), newTestFactory(t, ios, VersionInfo{Version: "test"}), args); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		if want := "on " + srv.Addr() + " (context prod-eu)"; !strings.Contains(ansi.Strip(out.String()), want) {
			t.Errorf("%s does not name its server %q:\n%s", args[0], want, ansi.Strip(out.String()))
		}
	}
}

// TestDemoTrafficReachesEveryBucket: piped, within 4 s the hot key is denied, every
// bucket of another application gets traffic through its own script, and nothing fails.
func TestDemoTrafficReachesEveryBucket(t *testing.T) {
	t.Parallel()
	r := run(t, "", "demo", "--in-process", "--duration", "4s")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if !strings.Contains(r.errOut, " 0 errors;") {
		t.Errorf("the demo's traffic failed: %s", r.errOut)
	}
	// Each line: "  2s  key tokens/cap +allowed -denied | key ...".
	moved := map[string]int{}
	var scraperDenied int
	for _, line := range strings.Split(strings.TrimSpace(r.out), "\n") {
		for _, part := range strings.Split(line[strings.Index(line, "s ")+2:], " | ") {
			f := strings.Fields(part)
			var a, d int
			if _, err := fmt.Sscanf(f[2]+" "+f[3], "+%d -%d", &a, &d); err != nil {
				t.Fatalf("part %q: %v", part, err)
			}
			moved[f[0]] += a + d
			if strings.HasPrefix(f[0], "api:scraper:") {
				scraperDenied += d
			}
		}
	}
	if scraperDenied == 0 {
		t.Errorf("no denial in 4 s:\n%s", r.out)
	}
	for _, prefix := range []string{"webman:", "gobench:", "spring:", "multitier:", "express:"} {
		n := 0
		for k, v := range moved {
			if strings.HasPrefix(k, prefix) {
				n++
				if v == 0 {
					t.Errorf("%s got no traffic:\n%s", k, r.out)
				}
			}
		}
		if n == 0 {
			t.Errorf("no %s bucket in the demo", prefix)
		}
	}
}

func TestDemoSummaryGroupsDigits(t *testing.T) {
	got := demoSummary(99155, 23283, 1002)
	want := "demo over: 99,155 allowed, 23,283 denied, 1,002 errors; sandbox stopped"
	if got != want {
		t.Errorf("demoSummary = %q, want %q", got, want)
	}
}
