package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// Keys that are not native buckets are refused by every strategy, with --yes and
// --raw-key, in a dry run too: one line naming the key (escaped), exit 1, nothing written.
func TestLoadRefusesKeysThatAreNotBuckets(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	hostile := "app:\x1b]52;c;aGk=\x07:x"
	for k, fields := range map[string][]any{
		"app:user:2":       {"tokens", "5", "ts", "1700000000000", "email", "a@x", "password_hash", "h"},
		"app:full":         {"tokens", "5", "ts", "1", "capacity", "10", "rate", "1", "email", "a@x"},
		"app:bench":        {"tokens", "5", "ts", "1700000000000"},
		"app:inf":          {"tokens", "5", "ts", "1", "capacity", "1e400", "rate", "1"},
		hostile:            {"tokens", "5", "ts", "1", "note", "x"},
		"app:cmp:multi":    {"tokens", "5", "ts", "1", "capacity", "10", "rate", "1", "owner", "app"},
		"bucketctl:load:x": {"tokens", "5", "ts", "1", "capacity", "10", "rate", "1", "email", "a@x"},
	} {
		if err := c.HSet(ctx, k, fields...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Set(ctx, "app:str", "5", 0)
	c.RPush(ctx, "app:list", "5")
	before := map[string]string{}
	for _, k := range c.Keys(ctx, "*").Val() {
		before[k] = dumpKey(t, c, k)
	}
	var runs [][]string
	for _, k := range []string{"app:user:2", "app:full", "app:bench", "app:inf", hostile, "app:str", "app:list"} {
		for _, s := range load.Strategies {
			runs = append(runs, []string{"load", k, "--raw-key", "--yes", "--strategy", string(s), "-n", "50"})
		}
	}
	runs = append(runs, []string{"load", "app:cmp", "--raw-key", "--yes", "--compare", "-n", "50"},
		[]string{"load", "x", "--yes", "-n", "50", "-o", "json"})
	for _, args := range runs {
		r := run(t, srv.URL(), args...)
		if r.code != ExitError || r.out != "" {
			t.Fatalf("%q: exit %d, stdout %q: want 1 and nothing", args, r.code, r.out)
		}
		oneLine(t, r)
		if !strings.Contains(r.errOut, "not a native bucket") || strings.ContainsAny(r.errOut, "\x1b\x07") {
			t.Fatalf("%q: %q", args, r.errOut)
		}
	}
	r := run(t, srv.URL(), "load", "app:cmp", "--raw-key", "--compare", "--dry-run")
	if r.code != ExitError || !strings.Contains(r.out, "refused: it is a hash with 1 field(s) a native bucket does not have") ||
		!strings.Contains(r.out, "app:cmp:lua") || !strings.Contains(r.out, "create, load-test, delete at the end") {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	after := c.Keys(ctx, "*").Val()
	if len(after) != len(before) {
		t.Errorf("keys before %d, after %d: %v", len(before), len(after), after)
	}
	for k, v := range before {
		if got := dumpKey(t, c, k); got != v {
			t.Errorf("%q changed", k)
		}
	}
}

// On an existing native bucket, the run uses the stored capacity and rate and leaves them
// as stored; a --capacity that differs is refused, never written. The plan (dry run, prompt, refusal
// without --yes) lists every field the run changes.
func TestLoadKeepsTheStoredSpec(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const key = "rate:user:7"
	fill := func() {
		t.Helper()
		c.Del(ctx, key) // a native-hash bucket, which the lua strategy converts
		if err := c.HSet(ctx, key, "tokens", "5", "ts", time.Now().UnixMicro(), "capacity", "5", "rate", "1").Err(); err != nil {
			t.Fatal(err)
		}
	}
	fill()
	for _, s := range load.Strategies {
		r := run(t, srv.URL(), "load", key, "--raw-key", "--yes", "--strategy", string(s), "-c", "2", "-n", "20", "-o", "json")
		var rep load.Report
		if err := json.Unmarshal([]byte(r.out), &rep); r.code != ExitOK || err != nil {
			t.Fatalf("%s: exit %d (%v): %s", s, r.code, err, r.errOut)
		}
		f := nativeFields(t, c, key)
		if rep.Capacity != 5 || rep.Rate != 1 || f["capacity"] != "5" || f["rate"] != "1" || (s != load.Multi && rep.Allowed > rep.TheoreticalMax) {
			t.Fatalf("%s: report spec %v/%v, allowed %d of %d; stored %v", s, rep.Capacity, rep.Rate, rep.Allowed, rep.TheoreticalMax, f)
		}
		for k := range f {
			if !strings.Contains(" tokens ts capacity rate allowed denied ", " "+k+" ") {
				t.Fatalf("%s wrote field %q", s, k)
			}
		}
	}
	// A flag that disagrees with the stored spec is refused (exit 2, naming the stored spec
	// and how to change it on purpose), with or without --yes and in a dry run: nothing
	// is written, the application's spec stays.
	fill()
	before := dumpKey(t, c, key)
	for _, extra := range [][]string{{"--yes", "-n", "5"}, {"--dry-run"}} {
		r := run(t, srv.URL(), append([]string{"load", key, "--raw-key", "--capacity", "7", "--rate", "1"}, extra...)...)
		if r.code != ExitUsage || !strings.Contains(r.errOut, "stores capacity 5 and rate 1/s") ||
			!strings.Contains(r.errOut, "reset 'rate:user:7' --capacity 7 --rate 1 --yes") || dumpKey(t, c, key) != before {
			t.Fatalf("load --capacity 7 %v on a bucket storing 5: exit %d: %s", extra, r.code, r.errOut)
		}
	}

	r := run(t, srv.URL(), "load", key, "--raw-key", "--dry-run")
	for _, want := range []string{"native bucket", "5 / 1/s (stored)", "load-test, keep (needs --yes)", "tokens, ts, allowed, denied, TTL"} {
		if r.code != ExitOK || !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q: exit %d\n%s%s", want, r.code, r.out, r.errOut)
		}
	}
	r = run(t, srv.URL(), "load", key, "--raw-key", "-n", "5")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "change its tokens, ts, allowed, denied, TTL; pass --yes") {
		t.Errorf("without --yes: exit %d: %s", r.code, r.errOut)
	}
	for _, answer := range []string{"n", "y"} {
		io, _, out, errOut := testStreams()
		asked := ""
		io.Prompt = func(q string) (string, error) { asked = q; return answer, nil }
		code := Run(ctx, newTestFactory(t, io, VersionInfo{Version: "test"}), []string{"--url", srv.URL(), "load", key, "--raw-key", "-n", "5"})
		if !strings.Contains(errOut.String(), "tokens, ts, allowed, denied, TTL") || !strings.Contains(asked, "1 existing bucket") {
			t.Fatalf("the prompt did not show the plan: %q\n%s", asked, errOut)
		}
		switch answer {
		case "n":
			if code != ExitError || out.Len() != 0 || dumpKey(t, c, key) != before {
				t.Fatalf("answer n: exit %d, out %q, or the bucket changed", code, out)
			}
		case "y":
			if code != ExitOK || !strings.Contains(out.String(), "requests 5") {
				t.Fatalf("answer y: exit %d\n%s%s", code, out, errOut)
			}
		}
	}
}

// Redis dies mid-run and stays down: the report so far is printed, the clean-up of the
// key the run created fails and the error names it, and the exit status is 3. With
// --keep (no clean-up) the status is 3 too.
func TestLoadRedisDiesMidRun(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		srv := redistest.Start(t)
		c := srv.Client(t)
		args := []string{"--url", srv.URL(), "load", "dies", "-c", "2", "-d", "1s", "-o", "json"}
		if keep {
			args = append(args, "--keep")
		}
		io, _, out, errOut := testStreams()
		done := make(chan int, 1)
		go func() { done <- Run(context.Background(), newTestFactory(t, io, VersionInfo{Version: "test"}), args) }()
		redistest.WaitFor(t, 10*time.Second, "the run's first decisions", func() bool {
			return nativeFields(t, c, "bucketctl:load:dies")["denied"] != ""
		})
		srv.Stop()
		code := <-done
		var rep load.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Errors == 0 || rep.Allowed == 0 {
			t.Fatalf("keep %v: the report so far: %+v (%v)", keep, rep, err)
		}
		if code != ExitUnreachable {
			t.Fatalf("keep %v: exit %d, want %d: %s", keep, code, ExitUnreachable, errOut)
		}
		lines := strings.Split(strings.TrimRight(errOut.String(), "\n"), "\n")
		last := lines[len(lines)-1]
		if !keep && (!strings.Contains(last, "bucketctl:load:dies") || !strings.Contains(last, "left behind")) {
			t.Fatalf("the error does not name the key left behind: %q", last)
		}
		if keep && !strings.Contains(last, "became unreachable during the run") {
			t.Fatalf("keep: %q", last)
		}
	}
}

// TestFailedCountIsExact: the failed requests of a run are counted as the report counts
// them, exact and grouped (format.GroupDigits), not compacted to "100k of 123k".
func TestFailedCountIsExact(t *testing.T) {
	got := failedCount([]load.Report{{Requests: 100_000, Errors: 99_234}, {Requests: 23_456, Errors: 1_000}})
	if want := "100,234 of 123,456 requests failed"; got != want {
		t.Errorf("failedCount = %q, want %q", got, want)
	}
}

// TestLoadCleanupReplyLost: the clean-up's delete reaches Redis and its reply is lost: the
// error says the key may be left behind (the delete may have been applied: here it was),
// not that it is.
func TestLoadCleanupReplyLost(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr())
	p.Arm(redistest.Rule{Match: "STRLEN", Fault: redistest.Drop}) // the clean-up script's source, sent after NOSCRIPT
	r := run(t, p.URL(), "load", "lost", "-c", "2", "-d", "300ms", "-o", "json")
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, "bucketctl:load:lost was sent but its reply was lost, so it may be left behind") {
		t.Fatalf("exit %d %q: want 3 and the key named as possibly left behind", r.code, r.errOut)
	}
	c := srv.Client(t)
	redistest.WaitFor(t, 10*time.Second, "the delete applied", func() bool { return c.Exists(context.Background(), "bucketctl:load:lost").Val() == 0 })
}
