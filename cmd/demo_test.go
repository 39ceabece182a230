package cmd

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/selfcmd"
)

// TestDemoShowsItsSandboxWhileRunning: on a terminal the live view itself names the
// sandbox, its URL and a command to try, while the sandbox is up (not only on stderr,
// which the full-screen view hides until it ends).
func TestDemoShowsItsSandboxWhileRunning(t *testing.T) {
	t.Parallel()
	// The command is on a line of its own, whole, at 80 columns.
	// (This test's binary has a long path: the server goes in the environment on a line of
	// its own; see TestDemoTry.)
	cmdLine := regexp.MustCompile(`(?m)^\s*export BUCKETCTL_URL=127\.0\.0\.1:\d+\s*\n\s*` + regexp.QuoteMeta(selfcmd.Current()) + ` inspect demo:api:scraper:203\.0\.113\.9\s*$`)
	wants := []string{"bucketctl top", "(demo sandbox)", "try this in another terminal:"}
	shown := func(out string) bool {
		screen := ansi.Strip(out)
		for _, want := range wants {
			if !strings.Contains(strings.Join(strings.Fields(screen), " "), want) {
				return false
			}
		}
		return cmdLine.MatchString(screen)
	}
	code, out, errOut := runDemoUntil(t, true, shown)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !shown(out) {
		t.Errorf("the live demo never showed the command to try on a line of its own, nor %q:\n%s", wants, ansi.Strip(out))
	}
	// Once the sandbox is gone, nothing on the terminal names it as a thing to try.
	if strings.Contains(errOut, "try this") || strings.Contains(errOut, "127.0.0.1") || !strings.Contains(errOut, "sandbox stopped") {
		t.Errorf("after the demo, stderr says %q", errOut)
	}
}

// runDemoUntil runs the in-process demo, on a terminal or piped, until done holds of its
// output (polled for up to a minute: how long the sandbox takes to start and the traffic
// to flow on a loaded machine is not what the tests assert), then stops it as Ctrl-C would.
func runDemoUntil(t *testing.T, tty bool, done func(out string) bool) (code int, out, errOut string) {
	t.Helper()
	outB, errB := &syncBuffer{}, &syncBuffer{}
	ios := &IOStreams{In: &bytes.Buffer{}, Out: outB, ErrOut: errB, StdoutTTY: tty, NoColor: true}
	ctx, stop := context.WithCancel(context.Background())
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, newTestFactory(t, ios, VersionInfo{Version: "test"}), []string{"demo", "--in-process", "--duration", "10m"})
	}()
	redistest.Poll(time.Minute, func() bool { return done(outB.String()) })
	stop()
	code = <-exit
	return code, outB.String(), errB.String()
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

// TestDemoTrafficReachesEveryBucket: piped, the hot key is soon denied, every bucket of
// another application gets traffic through its own script, and nothing fails.
func TestDemoTrafficReachesEveryBucket(t *testing.T) {
	t.Parallel()
	prefixes := []string{"webman:", "gobench:", "spring:", "multitier:", "express:"}
	// Each line: "  2s  key tokens/cap +allowed -denied | key ...".
	parse := func(out string) (moved map[string]int, scraperDenied int, err error) {
		moved = map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if line == "" {
				continue
			}
			for _, part := range strings.Split(line[strings.Index(line, "s ")+2:], " | ") {
				f := strings.Fields(part)
				var a, d int
				if len(f) < 4 {
					return nil, 0, fmt.Errorf("part %q", part)
				}
				if _, err := fmt.Sscanf(f[2]+" "+f[3], "+%d -%d", &a, &d); err != nil {
					return nil, 0, fmt.Errorf("part %q: %v", part, err)
				}
				moved[f[0]] += a + d
				if strings.HasPrefix(f[0], "api:scraper:") {
					scraperDenied += d
				}
			}
		}
		return moved, scraperDenied, nil
	}
	// Every bucket of each prefix (one at least) has had traffic.
	reached := func(moved map[string]int, prefix string) bool {
		n := 0
		for k, v := range moved {
			if strings.HasPrefix(k, prefix) {
				n++
				if v == 0 {
					return false
				}
			}
		}
		return n > 0
	}
	code, out, errOut := runDemoUntil(t, false, func(out string) bool {
		moved, denied, err := parse(out)
		if err != nil {
			return true
		}
		for _, prefix := range prefixes {
			if !reached(moved, prefix) {
				return false
			}
		}
		return denied > 0
	})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, " 0 errors;") {
		t.Errorf("the demo's traffic failed: %s", errOut)
	}
	moved, scraperDenied, err := parse(out)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if scraperDenied == 0 {
		t.Errorf("no denial in a minute:\n%s", out)
	}
	for _, prefix := range prefixes {
		if !reached(moved, prefix) {
			t.Errorf("a %s bucket got no traffic, or there is none:\n%s", prefix, out)
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
