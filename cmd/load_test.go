package cmd

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/tui/termtest"
)

func TestLoadOneSecondJSON(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	r := run(t, srv.URL(), "load", "api", "--capacity", "10", "--rate", "10", "-c", "8", "-d", "1s", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var rep load.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s", err, r.out)
	}
	if rep.Key != "bucketctl:load:api" || rep.Strategy != load.Lua || rep.Concurrency != 8 || rep.Requests == 0 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Allowed > rep.TheoreticalMax || rep.Allowed < 20 || rep.OverGrantPct > 0 || rep.Errors != 0 {
		t.Fatalf("allowed %d, theoretical max %d over %.3fs, errors %d", rep.Allowed, rep.TheoreticalMax, rep.DurationS, rep.Errors)
	}
	if rep.DurationS < 1 || rep.DurationS > 2 || rep.LatencyMS.P50 <= 0 || len(rep.Histogram) == 0 || len(rep.PerSecond) == 0 {
		t.Fatalf("duration %.3fs, latency %+v, histogram %v", rep.DurationS, rep.LatencyMS, rep.Histogram)
	}
	// The documented field names are there, in snake_case.
	var raw map[string]any
	_ = json.Unmarshal([]byte(r.out), &raw)
	for _, k := range []string{"duration_s", "theoretical_max", "over_grant_pct", "redis_calls_per_request", "ops_per_sec",
		"latency_ms", "latency_histogram", "per_second", "error_samples", "interrupted", "unsent"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if p99 := raw["latency_ms"].(map[string]any)["p99_9"]; p99 == nil {
		t.Errorf("latency_ms lacks p99_9: %v", raw["latency_ms"])
	}
	// The run created its key and deleted it at the end.
	if n := srv.Client(t).Exists(context.Background(), "bucketctl:load:api").Val(); n != 0 {
		t.Fatalf("the run left its key behind")
	}
}

// An existing key is refused with one line and exit 2, and nothing is written: not the
// bucket, not even the script cache.
func TestLoadRefusesAnExistingKeyWithoutYes(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := context.Background()
	if _, err := st.Take(ctx, "rate:user:1", bucket.Spec{Capacity: 5, Rate: 1}, 2); err != nil {
		t.Fatal(err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, k := range []string{"bucketctl:load:taken", "rate:user:multi"} {
		if err := c.HSet(ctx, k, "tokens", "3", "ts", "1", "capacity", "10", "rate", "10").Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"rate:user:1", "bucketctl:load:taken", "rate:user:multi"} {
		before[k] = dumpKey(t, c, k)
	}
	for _, args := range [][]string{
		{"load", "taken", "-d", "1s"},
		{"load", "rate:user:1", "--raw-key", "-d", "1s", "-o", "json"},
		{"load", "rate:user", "--raw-key", "--compare", "-d", "1s"}, // rate:user:multi exists
	} {
		r := run(t, srv.URL(), args...)
		if r.code != ExitUsage || r.out != "" {
			t.Fatalf("%v: exit %d, stdout %q: want 2 and nothing", args, r.code, r.out)
		}
		oneLine(t, r)
		if !strings.Contains(r.errOut, "already exists") || !strings.Contains(r.errOut, "--yes") {
			t.Fatalf("%v: %q", args, r.errOut)
		}
	}
	for k, v := range before {
		if got := dumpKey(t, c, k); got != v {
			t.Errorf("%s changed", k)
		}
	}
	for _, k := range []string{"rate:user:lua", "rate:user:watch"} {
		if c.Exists(ctx, k).Val() != 0 {
			t.Errorf("%s was created", k)
		}
	}
	if ok, _ := c.ScriptExists(ctx, st.SHA()).Result(); len(ok) != 1 || ok[0] {
		t.Errorf("the script was loaded: %v", ok)
	}

	// With --yes it runs, and leaves the existing bucket in place.
	r := run(t, srv.URL(), "load", "rate:user:1", "--raw-key", "--yes", "--capacity", "5", "--rate", "1", "-n", "20", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("with --yes: exit %d: %s", r.code, r.errOut)
	}
	var rep load.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil || rep.Requests != 20 || rep.Allowed > rep.TheoreticalMax {
		t.Fatalf("report %+v (%v)", rep, err)
	}
	if c.Exists(ctx, "rate:user:1").Val() != 1 {
		t.Fatal("the existing bucket was deleted")
	}
}

func TestLoadCompareAndTable(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	r := run(t, srv.URL(), "load", "cmp", "--compare", "-c", "16", "-d", "700ms", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	var cmp struct{ Runs []load.Report }
	if err := json.Unmarshal([]byte(r.out), &cmp); err != nil || len(cmp.Runs) != 3 {
		t.Fatalf("compare JSON: %v\n%s", err, r.out)
	}
	for i, s := range load.Strategies {
		rep := cmp.Runs[i]
		if rep.Strategy != s || rep.Key != "bucketctl:load:cmp:"+string(s) || rep.Requests == 0 {
			t.Fatalf("run %d: %+v", i, rep)
		}
		if s != load.Multi && rep.Allowed > rep.TheoreticalMax {
			t.Fatalf("%s allowed %d of at most %d", s, rep.Allowed, rep.TheoreticalMax)
		}
	}
	if cmp.Runs[1].RedisCallsPerRequest != 3 || cmp.Runs[0].RedisCallsPerRequest != 1 {
		t.Fatalf("calls per request: lua %.2f, multi %.2f", cmp.Runs[0].RedisCallsPerRequest, cmp.Runs[1].RedisCallsPerRequest)
	}
	if !strings.Contains(r.errOut, "] ") || !strings.Contains(r.errOut, " allowed ") {
		t.Errorf("no progress lines on stderr: %q", r.errOut)
	}

	r = run(t, srv.URL(), "load", "tbl", "-c", "4", "-n", "500")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, want := range []string{"bucketctl load bucketctl:load:tbl", "requests 500", "theoretical max", "latency p50"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("table report lacks %q:\n%s", want, r.out)
		}
	}
}

// Ctrl-C stops the run, prints the report so far and exits 130.
func TestLoadInterrupted(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	io, _, out, errOut := TestIO()
	f := NewFactory(io, VersionInfo{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	code := Run(ctx, f, []string{"--url", srv.URL(), "load", "int", "-d", "1m", "-o", "json"})
	if code != ExitInterrupted || time.Since(start) > 20*time.Second {
		t.Fatalf("exit %d after %v: %s", code, time.Since(start), errOut)
	}
	var rep load.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.Interrupted || rep.Requests == 0 {
		t.Fatalf("report so far %+v (%v)", rep, err)
	}
	if srv.Client(t).Exists(context.Background(), "bucketctl:load:int").Val() != 0 {
		t.Fatal("the interrupted run left its key behind")
	}
}

func TestLoadDryRunAndFlags(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	r := run(t, srv.URL(), "load", "dry", "--compare", "--dry-run")
	if r.code != ExitOK || !strings.Contains(r.out, "bucketctl:load:dry:watch") || !strings.Contains(r.errOut, "nothing sent") {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if n := srv.Client(t).DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("the dry run wrote %d keys", n)
	}
	for _, args := range [][]string{
		{"load"},
		{"load", "k", "--compare", "--strategy", "multi"},
		{"load", "k", "--strategy", "multi", "--pipeline", "4"},
		{"load", "k", "--compare", "--pipeline", "4"},
		{"load", "k", "--duration", "11m"},
		{"load", "k", "--duration", "0s"},
		{"load", "k", "--requests", "-1"},
		{"load", "k", "--arrival", "poisson"},
		{"load", "k", "--arrival", "bursty", "--arrival-rate", "5"},
		{"load", "k", "--arrival-rate", "5"},
		{"load", "k", "--arrival", "poisson", "--arrival-rate", "5", "--burst-every", "1s"},
		{"load", "k", "--cost", "11"},
		{"load", "k", "--capacity", "0"},
		{"load", "k", "-c", "0"},
		{"load", "k", "--pipeline", "0"},
		{"load", "k", "-o", "csv"},
	} {
		// An unreachable URL: a usage error must come before any dial.
		r := run(t, "redis://127.0.0.1:1", args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, ExitUsage, r.errOut)
		}
	}
	var got *LoadOptions
	cmd := NewCmdLoad(NewFactory(&IOStreams{}, VersionInfo{}), func(o *LoadOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"k", "-n", "100", "--arrival", "poisson", "--arrival-rate", "50", "--burst-every", "2s", "--burst-size", "10", "--strategy", "watch"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	c := got.Config
	if c.Key != "bucketctl:load:k" || c.Requests != 100 || c.Duration != 0 || c.Arrival != load.Poisson || c.ArrivalRate != 50 ||
		c.BurstEvery != 2*time.Second || c.BurstSize != 10 || c.Strategy != load.Watch {
		t.Errorf("config %+v", c)
	}
}

// The report on a terminal is the piped report: the live view (on stderr) clears itself,
// and the report printed after it has every histogram row, adding up to the requests;
// a comparison's summary names every strategy.
func TestLoadReportOnTerminalAndPiped(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	for _, tty := range []bool{true, false} {
		for _, args := range [][]string{
			{"load", "whole", "-c", "4", "-n", "3000"},
			{"load", "cmp", "--compare", "-c", "4", "-n", "600"},
		} {
			io, _, out, errOut := TestIO()
			io.StdoutTTY, io.StderrTTY = tty, tty
			f := NewFactory(io, VersionInfo{Version: "test"})
			code := Run(context.Background(), f, append([]string{"--url", srv.URL()}, args...))
			if code != ExitOK {
				t.Fatalf("tty %v %v: exit %d: %s", tty, args, code, errOut)
			}
			screen := out.String()
			if tty {
				term := termtest.New(80, 24)
				_, _ = term.Write(errOut.Bytes())
				if left := term.String(); left != "" {
					t.Fatalf("the live view left this on the terminal:\n%s", left)
				}
				term.ONLCR = true
				_, _ = term.Write(out.Bytes())
				if screen = term.String(); screen != strings.TrimRight(out.String(), "\n") {
					t.Fatalf("the terminal shows\n%s\nwhere the report is\n%s", screen, out)
				}
			}
			if args[2] == "--compare" {
				for _, s := range load.Strategies {
					if !regexp.MustCompile(`(?m)^  ` + string(s) + ` +(exact|over-granted|no over-grant|\d)`).MatchString(screen) {
						t.Errorf("tty %v: the comparison's summary leaves out %s:\n%s", tty, s, screen)
					}
				}
				continue
			}
			m := regexp.MustCompile(`requests ([\d,]+)`).FindStringSubmatch(screen)
			if m == nil {
				t.Fatalf("no request count in\n%s", screen)
			}
			if got, want := histogramTotal(t, screen), atoi(t, m[1]); got != want || want != 3000 {
				t.Errorf("tty %v: the histogram's rows add up to %d of %d requests:\n%s", tty, got, want, screen)
			}
		}
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// histogramTotal adds up the counts of the histogram rows of a printed report.
func histogramTotal(t *testing.T, report string) int64 {
	t.Helper()
	var total int64
	rows := 0
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, "  ≤ ") || strings.HasPrefix(l, "  > ") {
			f := strings.Fields(l)
			total += atoi(t, f[len(f)-2])
			rows++
		}
	}
	if rows == 0 {
		t.Fatalf("no histogram in\n%s", report)
	}
	return total
}

// Keys that are not native buckets are refused by every strategy, with --yes and
// --raw-key, in a dry run too: one line naming the key (escaped), exit 1, nothing written.
func TestLoadRefusesKeysThatAreNotBuckets(t *testing.T) {
	isolate(t)
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
// as stored; --capacity changes only the capacity. The plan (dry run, prompt, refusal
// without --yes) lists every field the run changes.
func TestLoadKeepsTheStoredSpec(t *testing.T) {
	isolate(t)
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const key = "rate:user:7"
	fill := func() {
		t.Helper()
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
		f := c.HGetAll(ctx, key).Val()
		if rep.Capacity != 5 || rep.Rate != 1 || f["capacity"] != "5" || f["rate"] != "1" || (s != load.Multi && rep.Allowed > rep.TheoreticalMax) {
			t.Fatalf("%s: report spec %v/%v, allowed %d of %d; stored %v", s, rep.Capacity, rep.Rate, rep.Allowed, rep.TheoreticalMax, f)
		}
		for k := range f {
			if !strings.Contains(" tokens ts capacity rate allowed denied ", " "+k+" ") {
				t.Fatalf("%s wrote field %q", s, k)
			}
		}
	}
	r := run(t, srv.URL(), "load", key, "--raw-key", "--yes", "--capacity", "7", "-n", "5", "-o", "json")
	if f := c.HGetAll(ctx, key).Val(); r.code != ExitOK || f["capacity"] != "7" || f["rate"] != "1" {
		t.Fatalf("with --capacity 7: exit %d, stored %v: %s", r.code, f, r.errOut)
	}
	fill()
	before := dumpKey(t, c, key)

	r = run(t, srv.URL(), "load", key, "--raw-key", "--dry-run")
	for _, want := range []string{"native bucket", "5 / 1/s (stored)", "load-test, keep (needs --yes)", "tokens, ts, allowed, denied, TTL"} {
		if r.code != ExitOK || !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q: exit %d\n%s%s", want, r.code, r.out, r.errOut)
		}
	}
	r = run(t, srv.URL(), "load", key, "--raw-key", "--dry-run", "--capacity", "7", "--rate", "1")
	if !strings.Contains(r.out, "7 / 1/s (was 5 / 1/s)") || !strings.Contains(r.out, "tokens, ts, allowed, denied, capacity, TTL") {
		t.Errorf("dry run with --capacity 7:\n%s", r.out)
	}
	r = run(t, srv.URL(), "load", key, "--raw-key", "-n", "5")
	if r.code != ExitUsage || !strings.Contains(r.errOut, "change its tokens, ts, allowed, denied, TTL; pass --yes") {
		t.Errorf("without --yes: exit %d: %s", r.code, r.errOut)
	}
	for _, answer := range []string{"n", "y"} {
		io, _, out, errOut := TestIO()
		asked := ""
		io.Prompt = func(q string) (string, error) { asked = q; return answer, nil }
		code := Run(ctx, NewFactory(io, VersionInfo{Version: "test"}), []string{"--url", srv.URL(), "load", key, "--raw-key", "-n", "5"})
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
	isolate(t)
	for _, keep := range []bool{false, true} {
		srv := redistest.Start(t)
		c := srv.Client(t)
		args := []string{"--url", srv.URL(), "load", "dies", "-c", "2", "-d", "1s", "-o", "json"}
		if keep {
			args = append(args, "--keep")
		}
		io, _, out, errOut := TestIO()
		done := make(chan int, 1)
		go func() { done <- Run(context.Background(), NewFactory(io, VersionInfo{Version: "test"}), args) }()
		redistest.WaitFor(t, 10*time.Second, "the run's first decisions", func() bool {
			return c.HGet(context.Background(), "bucketctl:load:dies", "denied").Val() != ""
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
