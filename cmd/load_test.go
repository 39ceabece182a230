package cmd

import (
	"context"
	"encoding/json"
	"fmt"
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
	t.Parallel()
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
	// Numbers are rounded as every command's are: seconds to the microsecond, the rest to
	// 3 decimals (ops_per_sec used to carry 10).
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		case float64:
			if most := map[bool]int{true: 6, false: 3}[strings.HasSuffix(path, "_s")]; decimals(v) > most {
				t.Errorf("%s = %v: more than %d decimals", path, v, most)
			}
		}
	}
	walk("", raw)
	// The run created its key and deleted it at the end.
	if n := srv.Client(t).Exists(context.Background(), "bucketctl:load:api").Val(); n != 0 {
		t.Fatalf("the run left its key behind")
	}
}

// An existing key is refused with one line and exit 2, and nothing is written: not the
// bucket, not even the script cache.
func TestLoadRefusesAnExistingKeyWithoutYes(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	srv := redistest.Start(t)
	// Each run outlasts the one-second progress tick, so a tick falls inside one whatever
	// the gaps between runs on a busy machine.
	r := run(t, srv.URL(), "load", "cmp", "--compare", "-c", "16", "-d", "1500ms", "-o", "json")
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
	if cmp.Runs[1].RedisCallsPerRequest != 2 || cmp.Runs[0].RedisCallsPerRequest != 1 {
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
	t.Parallel()
	srv := redistest.Start(t)
	io, _, out, errOut := testStreams()
	f := newTestFactory(t, io, VersionInfo{Version: "test"})
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
	t.Parallel()
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
	cmd := NewCmdLoad(newTestFactory(t, &IOStreams{}, VersionInfo{}), func(o *LoadOptions) error { got = o; return nil })
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
	t.Parallel()
	srv := redistest.Start(t)
	for _, tty := range []bool{true, false} {
		for _, args := range [][]string{
			{"load", "whole", "-c", "4", "-n", "3000"},
			{"load", "cmp", "--compare", "-c", "4", "-n", "600"},
		} {
			io, _, out, errOut := testStreams()
			io.StdoutTTY, io.StderrTTY = tty, tty
			f := newTestFactory(t, io, VersionInfo{Version: "test"})
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

// TestLoadProcs: against a server on this machine the workers leave it one processor; a
// remote server, or GOMAXPROCS set, changes nothing (0).
func TestLoadProcs(t *testing.T) {
	for _, c := range []struct {
		addr, env   string
		procs, want int
	}{
		{"127.0.0.1:6379", "", 2, 1},
		{"[::1]:6379", "", 8, 7},
		{"localhost:6379", "", 1, 1},
		{"10.0.0.5:6379", "", 8, 0},
		{"redis.internal:6379", "", 8, 0},
		{"127.0.0.1:6379", "4", 8, 0},
	} {
		if got := loadProcs(c.addr, c.env, c.procs); got != c.want {
			t.Errorf("loadProcs(%q, GOMAXPROCS=%q, %d processors) = %d, want %d", c.addr, c.env, c.procs, got, c.want)
		}
	}
}
