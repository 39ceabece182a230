package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

func TestWatchPipedPrintsCountLines(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := st.Take(ctx, "w:k", bucket.Spec{Capacity: 10, Rate: 0.001}, 1); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, srv.URL(), "watch", "w:k", "--count", "3", "--interval", "20ms")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	lines := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("printed %d lines, want 3:\n%s", len(lines), r.out)
	}
	for i, l := range lines {
		for _, want := range []string{"time=", " key=w:k ", " tokens=7", " capacity=10 ", " fill=70% ", " layout=native", " retry_after=0s"} {
			if !strings.Contains(l, want) {
				t.Errorf("line %d lacks %q: %s", i+1, want, l)
			}
		}
	}
	if !strings.Contains(lines[0], "allowed_per_s=- denied_per_s=-") {
		t.Errorf("the first line has rates without a previous read: %s", lines[0])
	}
	if !strings.Contains(lines[2], "allowed_per_s=0 denied_per_s=0 consumed_per_s=0") {
		t.Errorf("an idle bucket shows activity: %s", lines[2])
	}
	// A cost above capacity never passes: one word scripts can match.
	r = run(t, srv.URL(), "watch", "w:k", "--count", "1", "--cost", "20")
	if r.code != ExitOK || !strings.Contains(r.out, " retry_after=never ") {
		t.Errorf("cost above capacity: exit %d: %q, want retry_after=never", r.code, r.out)
	}
}

func TestWatchJSONStreamsRates(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	st := bucket.NewStore(srv.Client(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := bucket.Spec{Capacity: 1e6, Rate: 1}
	if _, err := st.Take(ctx, "w:busy", spec, 1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // traffic while watching: every take is allowed
		defer wg.Done()
		for ctx.Err() == nil {
			_, _ = st.Take(ctx, "w:busy", spec, 1)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	r := run(t, srv.URL(), "watch", "w:busy", "-o", "json", "--count", "3", "--interval", "100ms")
	cancel()
	wg.Wait()
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	lines := strings.Split(strings.TrimRight(r.out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("printed %d lines, want 3 JSON objects:\n%s", len(lines), r.out)
	}
	var views []map[string]any
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not one JSON object per line: %v: %s", err, l)
		}
		views = append(views, v)
	}
	if views[0]["allowed_per_s"] != nil || views[0]["interval_ms"] != nil {
		t.Errorf("first object has rates: %v", views[0])
	}
	for _, v := range views[1:] {
		if v["key"] != "w:busy" || v["layout"] != "native" {
			t.Errorf("object %v", v)
		}
		if a, _ := v["allowed_per_s"].(float64); a <= 0 {
			t.Errorf("allowed_per_s %v under traffic, want > 0", v["allowed_per_s"])
		}
		if d, _ := v["denied_per_s"].(float64); d != 0 {
			t.Errorf("denied_per_s %v, want 0", v["denied_per_s"])
		}
		if c, _ := v["consumed_per_s"].(float64); c <= 0 {
			t.Errorf("consumed_per_s %v under traffic, want > 0", v["consumed_per_s"])
		}
		if iv, _ := v["interval_ms"].(float64); iv <= 0 {
			t.Errorf("interval_ms %v", v["interval_ms"])
		}
		for _, k := range []string{"time", "tokens", "capacity", "rate", "ttl_ms", "retry_after_ms"} {
			if _, ok := v[k]; !ok {
				t.Errorf("object lacks %q: %v", k, v)
			}
		}
	}
}

// syncBuffer is a buffer a test reads while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWatchKeepsGoingAcrossARedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	out, errOut := &syncBuffer{}, &syncBuffer{}
	f := newTestFactory(t, &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut, NoColor: true}, VersionInfo{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, f, []string{"--url", srv.URL(), "--timeout", "500ms", "watch", "w:r",
			"--capacity", "5", "--rate", "1", "--interval", "30ms"})
	}()
	redistest.WaitFor(t, 15*time.Second, "a first line", func() bool { return strings.Contains(out.String(), "key=w:r") })
	srv.Kill()
	redistest.WaitFor(t, 15*time.Second, "the unreachable report", func() bool { return strings.Contains(errOut.String(), "cannot reach Redis at "+srv.Addr()) })
	linesBefore := strings.Count(out.String(), "\n")
	srv.Restart(t)
	redistest.WaitFor(t, 15*time.Second, "lines after the restart", func() bool { return strings.Count(out.String(), "\n") > linesBefore+1 })
	cancel()
	select {
	case c := <-code:
		if c != ExitInterrupted {
			t.Errorf("exit %d after Ctrl-C, want %d", c, ExitInterrupted)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("watch did not stop on cancel")
	}
	if last := strings.Split(strings.TrimSpace(out.String()), "\n"); !strings.Contains(last[len(last)-1], "tokens=5 capacity=5") {
		t.Errorf("after the restart the bucket is missing and reads full; last line %q", last[len(last)-1])
	}
}

func TestWatchFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"watch"},
		{"watch", "a", "b"},
		{"watch", "a", "--interval", "1ms"},
		{"watch", "a", "--count", "-1"},
		{"watch", "a", "-o", "wide"},
		{"watch", "a", "--window", "1s", "--interval", "2s"},
		{"watch", "a", "--capacity", "10"},
	} {
		// An unreachable URL: a usage error must come before any dial.
		r := run(t, "redis://127.0.0.1:1", args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, r.code, ExitUsage, r.errOut)
		}
	}
	var got *WatchOptions
	cmd := NewCmdWatch(newTestFactory(t, &IOStreams{}, VersionInfo{}), func(o *WatchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"k", "--interval", "250ms", "--count", "5", "--duration", "1m", "-o", "json", "--cost", "2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Key != "k" || got.Interval != 250*time.Millisecond || got.Count != 5 || got.Duration != time.Minute ||
		got.Output != output.FormatJSON || got.Spec.Cost != 2 {
		t.Errorf("options %+v", got)
	}
}

// TestWatchMissingKey: piped, a key that does not exist says so (exists=false, JSON
// "exists": false with null tokens), never tokens=0, and stderr suggests a typo.
func TestWatchMissingKey(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := run(t, srv.URL(), "watch", "w:typo", "--count", "2", "--interval", "20ms")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if !strings.Contains(l, " exists=false ") || !strings.Contains(l, `missing="no such key"`) || strings.Contains(l, "tokens=") {
			t.Errorf("missing key line: %s", l)
		}
	}
	if strings.Count(r.errOut, "w:typo: no such key (misspelt, or a bucket that expired full") != 1 {
		t.Errorf("stderr %q: want one note that the key does not exist, naming both causes", r.errOut)
	}
	r = run(t, srv.URL(), "watch", "w:typo", "--count", "1", "-o", "json")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("%v: %s", err, r.out)
	}
	if v["exists"] != false || v["tokens"] != nil {
		t.Errorf("JSON of a missing key: exists %v, tokens %v; want false and null", v["exists"], v["tokens"])
	}
	// With the capacity known, a missing bucket reads as full, and still says it is missing.
	r = run(t, srv.URL(), "watch", "w:typo", "--count", "1", "--capacity", "5", "--rate", "1")
	if !strings.Contains(r.out, "exists=false tokens=5 capacity=5") {
		t.Errorf("missing key of known spec: %s", r.out)
	}
}

// TestWatchEscapesKeyNames: a key holding escape sequences is printed escaped.
func TestWatchEscapesKeyNames(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	r := run(t, srv.URL(), "watch", "w:\x1b[2J", "--count", "1", "--capacity", "5", "--rate", "1")
	if strings.Contains(r.out, "\x1b") || !strings.Contains(r.out, `w:\x1b[2J`) {
		t.Errorf("key not escaped: %q", r.out)
	}
}

// TestWatchYAMLStreamsDocuments: -o yaml prints one YAML document per refresh, each with
// the JSON line's fields and plain numbers (an age in ms has no exponent).
func TestWatchYAMLStreamsDocuments(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	srv.Client(t).HSet(context.Background(), "w:y", "tokens", "3", "ts", "1700000000000000", "capacity", "10", "rate", "1")
	r := run(t, srv.URL(), "watch", "w:y", "-o", "yaml", "--count", "2", "--interval", "100ms")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	dec := yaml.NewDecoder(strings.NewReader(r.out))
	var docs []map[string]any
	for {
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			break
		}
		docs = append(docs, v)
	}
	if len(docs) != 2 || strings.Count(r.out, "---\n") != 2 {
		t.Fatalf("%d documents, want 2 each after ---:\n%s", len(docs), r.out)
	}
	for i, d := range docs {
		if d["key"] != "w:y" || d["capacity"] != 10 || d["time"] == nil {
			t.Fatalf("document %d: %v", i, d)
		}
		if _, ok := d["allowed_per_s"]; !ok {
			t.Fatalf("document %d lacks allowed_per_s: %v", i, d)
		}
	}
	if docs[1]["interval_ms"] == nil {
		t.Fatalf("second document has no interval: %v", docs[1])
	}
	if strings.Contains(r.out, "e+") {
		t.Fatalf("a number with an exponent:\n%s", r.out)
	}
}

// TestWatchDurationEndsUnreachable: a watch whose --duration ends while Redis is still
// unreachable exits 3 (the failure), not 0 as if it had watched to the end.
func TestWatchDurationEndsUnreachable(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	out, errOut := &syncBuffer{}, &syncBuffer{}
	f := newTestFactory(t, &IOStreams{In: &bytes.Buffer{}, Out: out, ErrOut: errOut, NoColor: true}, VersionInfo{Version: "test"})
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), f, []string{"--url", srv.URL(), "--timeout", "300ms", "watch", "w:u",
			"--capacity", "5", "--rate", "1", "--interval", "50ms", "--duration", "3s"})
	}()
	redistest.WaitFor(t, 15*time.Second, "a first line", func() bool { return strings.Contains(out.String(), "key=w:u") })
	srv.Kill()
	select {
	case c := <-code:
		if c != ExitUnreachable || !strings.Contains(errOut.String(), "cannot reach Redis at "+srv.Addr()) {
			t.Errorf("exit %d, stderr %q: want 3 and the unreachable server named", c, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not end at --duration")
	}
}

// TestWatchCountShortExitsWithTheFailure: a --count run that a failed refresh leaves short
// of its records exits with that failure (3, naming the server), not 0 as if it had printed
// them all; a run whose refreshes all succeed still exits 0.
func TestWatchCountShortExitsWithTheFailure(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	run(t, srv.URL(), "watch", "w:n", "--capacity", "5", "--rate", "1", "--count", "1") // loads the read script: one request per read
	for _, c := range []struct {
		format string
		fault  redistest.Fault
		says   string
	}{
		{"json", redistest.Drop, "cannot reach Redis at "},
		{"yaml", redistest.Drop, "cannot reach Redis at "},
		{"table", redistest.Drop, "cannot reach Redis at "},
		{"json", redistest.Hold, "Redis at "}, // "... did not answer within --timeout"
	} {
		format := c.format
		p := redistest.StartProxy(t, srv.Addr())
		// The bucket check and the first record pass; the reply to the second record's read
		// is dropped (or held past --timeout): the second of three records is missing.
		p.Arm(redistest.Rule{Match: "w:n", Skip: 3, Fault: c.fault})
		r := run(t, p.URL(), "--timeout", "300ms", "watch", "w:n", "--capacity", "5", "--rate", "1", "--count", "3", "--interval", "50ms", "-o", format)
		if !p.Fired() {
			t.Fatalf("-o %s: no refresh failed: exit %d, stderr %q", format, r.code, r.errOut)
		}
		records := strings.Count(r.out, "w:n")
		if records != 2 || r.code != ExitUnreachable || !strings.Contains(r.errOut, "printed 2 of 3 records: "+c.says+p.Addr()) {
			t.Errorf("-o %s, reply %v: %d records, exit %d, stderr %q: want 2, exit 3 and the shortfall with the server named", format, c.fault, records, r.code, r.errOut)
		}
		if ok := run(t, p.URL(), "watch", "w:n", "--capacity", "5", "--rate", "1", "--count", "2", "--interval", "50ms", "-o", format); ok.code != ExitOK || strings.Count(ok.out, "w:n") != 2 {
			t.Errorf("-o %s: a run with no failure: exit %d, %d records: %s", format, ok.code, strings.Count(ok.out, "w:n"), ok.errOut)
		}
	}
}
