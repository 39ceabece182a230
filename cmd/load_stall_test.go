package cmd

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestLoadDurationKeptWhenServerStalls: a server that stops answering a moment into the run
// (DEBUG SLEEP, longer than the run) does not stretch it: load --duration D ends within D
// plus its stated grace (--timeout and one second), and reports what it saw.
func TestLoadDurationKeptWhenServerStalls(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	const d, timeout = 2 * time.Second, 2 * time.Second
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		done <- run(t, srv.URL(), "load", "stall", "--capacity", "100", "--rate", "100", "-c", "4",
			"-d", d.String(), "--timeout", timeout.String(), "-o", "json")
	}()
	// The run has begun deciding: then the server stops answering for longer than the run.
	redistest.WaitFor(t, 5*time.Second, "the load run to decide", func() bool {
		n, err := strconv.ParseInt(hget(t, c, load.KeyFor("stall", false), "allowed"), 10, 64)
		return err == nil && n > 0
	})
	awake := redistest.Stall(t, srv.Addr(), "4")
	defer awake()
	var r result
	select {
	case r = <-done:
	case <-time.After(d + timeout + 5*time.Second):
		t.Fatalf("load -d %s --timeout %s still running after %s", d, timeout, time.Since(start))
	}
	took := time.Since(start)
	// The promise, with half a second for starting up and printing on a busy machine.
	if limit := d + timeout + time.Second + 500*time.Millisecond; took > limit {
		t.Errorf("load -d %s --timeout %s took %s, over %s", d, timeout, took, limit)
	}
	var rep load.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s\n%s", err, r.out, r.errOut)
	}
	if rep.Requests == 0 || rep.Allowed == 0 || rep.Errors == 0 {
		t.Errorf("the report should count the decisions made and the requests that timed out: %+v", rep)
	}
	// Whether the server answers again by the PING after the run depends on the machine's
	// pace: exit 3 saying so, or 0 with the errors in the report.
	if (r.code != ExitUnreachable || !strings.Contains(r.errOut, "Redis")) && r.code != ExitOK {
		t.Errorf("exit %d, want %d saying Redis did not answer, or 0: %s", r.code, ExitUnreachable, r.errOut)
	}
}

// TestLoadCompareEndsWhenServerStalls: a server that stops answering during a comparison
// ends it after that run, within one run's promise (--duration, --timeout and the second
// of the PING), instead of running the next strategies against it for their whole
// duration.
func TestLoadCompareEndsWhenServerStalls(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	const d, timeout = 2 * time.Second, time.Second
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		done <- run(t, srv.URL(), "load", "cmpstall", "--compare", "--capacity", "100", "--rate", "100", "-c", "4",
			"-d", d.String(), "--timeout", timeout.String(), "-o", "json")
	}()
	redistest.WaitFor(t, 5*time.Second, "the lua run to decide", func() bool {
		n, err := strconv.ParseInt(hget(t, c, load.CompareKey(load.KeyFor("cmpstall", false), load.Lua), "allowed"), 10, 64)
		return err == nil && n > 0
	})
	awake := redistest.Stall(t, srv.Addr(), "6")
	defer awake()
	var r result
	select {
	case r = <-done:
	case <-time.After(3*d + 3*timeout + 5*time.Second):
		t.Fatalf("load --compare still running after %s", time.Since(start))
	}
	// One run's promise, with half a second for starting up and printing on a busy machine.
	if took, limit := time.Since(start), d+timeout+time.Second+500*time.Millisecond; took > limit {
		t.Errorf("load --compare -d %s --timeout %s took %s with the server stalled, over %s", d, timeout, took, limit)
	}
	var rep struct{ Runs []load.Report }
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("the report is not JSON: %v\n%s\n%s", err, r.out, r.errOut)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Strategy != load.Lua || rep.Runs[0].Errors == 0 {
		t.Errorf("want the lua run alone, with its errors: %+v", rep.Runs)
	}
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, "Redis") {
		t.Errorf("exit %d, want %d saying Redis did not answer: %q", r.code, ExitUnreachable, r.errOut)
	}
}
