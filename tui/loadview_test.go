package tui

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
)

// loadSnap is a run of capacity 10, rate 10/s on a hot key, elapsed into a 10 s run: the
// first second drains the bucket, then 10 allowed per second against ~50k denied.
func loadSnap(elapsed time.Duration, strategy load.Strategy) load.Snapshot {
	secs := []load.Second{{Allowed: 19, Denied: 41391}, {Allowed: 10, Denied: 54113}, {Allowed: 10, Denied: 52870},
		{Allowed: 10, Denied: 50002}, {Allowed: 10, Denied: 51240}, {Allowed: 3, Denied: 20011}}
	n := min(len(secs), int(elapsed/time.Second)+1)
	s := load.Snapshot{Key: "bucketctl:load:api", Strategy: strategy, Spec: bucket.Spec{Capacity: 10, Rate: 10},
		Elapsed: elapsed, Duration: 10 * time.Second, Running: true, PerSecond: secs[:n],
		Tokens: 0.42, HasTokens: true, Retries: 0,
		Latency: load.Latency{Min: 0.31, Mean: 1.2, P50: 1.17, P90: 1.83, P99: 3.18, P999: 7.54, Max: 9.65}}
	for _, p := range s.PerSecond {
		s.Allowed += p.Allowed
		s.Denied += p.Denied
	}
	s.Decisions = s.Allowed + s.Denied
	s.Calls = s.Decisions
	return s
}

func loadReport(strategy load.Strategy, allowed, max int64, overGrant float64) load.Report {
	return load.Report{Server: "127.0.0.1:6379", Key: "bucketctl:load:api:" + string(strategy), Strategy: strategy, Arrival: load.Closed,
		Concurrency: 64, Pipeline: 1, Capacity: 10, Rate: 10, Cost: 1, DurationS: 3.019,
		Requests: 49460, Allowed: allowed, Denied: 49460 - allowed, RedisCalls: 49460, RedisCallsPerRequest: 1,
		OpsPerSec: 16383, TheoreticalMax: max, OverGrantPct: overGrant,
		LatencyMS: load.Latency{Min: 0.31, Mean: 1.2, P50: 1.17, P90: 1.83, P99: 3.18, P999: 7.54, Max: 9.65},
		Histogram: []load.Band{{UpToMS: 0.5, Count: 120}, {UpToMS: 1, Count: 20341}, {UpToMS: 2, Count: 24107},
			{UpToMS: 5, Count: 4610}, {UpToMS: 10, Count: 282}},
		PerSecond: []load.Second{{Allowed: 20, Denied: 16000}}, ErrorSamples: []load.ErrorSample{}}
}

// snapSource serves whatever snapshot the test last stored.
type snapSource struct{ cur atomic.Pointer[load.Snapshot] }

func (s *snapSource) set(v load.Snapshot)       { s.cur.Store(&v) }
func (s *snapSource) get() load.Snapshot        { return *s.cur.Load() }
func newSnapSource(v load.Snapshot) *snapSource { s := &snapSource{}; s.set(v); return s }

func TestLoadViewGoldenResizeAndReport(t *testing.T) {
	src := newSnapSource(loadSnap(1500*time.Millisecond, load.Lua))
	var stopped atomic.Bool
	m := NewLoad(src.get, LoadOptions{Title: "lua · closed loop · 64 workers", Interval: 10 * time.Millisecond,
		Styles: &testStyles, Stop: func() { stopped.Store(true) }})
	tm, p := run(t, m, 80, 24)

	waitView(t, tm, p, contains("15% · 1.5s of 10s"))
	src.set(loadSnap(4500*time.Millisecond, load.Lua))
	screen := waitView(t, tm, p, contains("45% · 4.5s of 10s"))
	checkSize(t, screen, 80, 24)
	mustShow(t, "80x24 screen", screen, "bucketctl:load:api", "allowed 59", "denied 249,616", "55.5k ops/s", "errors 0",
		"last second: allowed 10/s · denied 50k/s", "p99      3.18ms", "p99.9    7.54ms", "0.42 / 10 tokens",
		"calls/request 1.00", "allowed/s", "denied/s", "q stop and report")
	golden(t, "80x24", screen)

	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	screen = waitView(t, tm, p, func(s string) bool { return strings.Count(s, "\n") == 39 })
	checkSize(t, screen, 120, 40)
	golden(t, "120x40", screen)

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	waitView(t, tm, p, contains("stopping…"))
	if !stopped.Load() {
		t.Fatal("q did not ask the run to stop")
	}
	r := loadReport(load.Lua, 40, 40, 0)
	r.Interrupted = true
	final := finish(t, tm, 120, "report", r)
	mustShow(t, "the final report", final, "theoretical max 40", "over-grant 0.00% ✔", "interrupted: the report so far",
		"p99.9 7.54ms", "≤ 2ms", "24,107")
	// The report is the last frame the program drew: it stays on the terminal.
	out, err := io.ReadAll(tm.FinalOutput(t))
	if err != nil || !strings.Contains(string(out), "theoretical max") {
		t.Fatalf("the program's output does not end with the report (%v)", err)
	}
}

func TestLoadViewComparison(t *testing.T) {
	src := newSnapSource(loadSnap(2500*time.Millisecond, load.Multi))
	m := NewLoad(src.get, LoadOptions{Title: "compare", Runs: load.Strategies, Interval: 10 * time.Millisecond,
		Styles: &testStyles})
	tm, p := run(t, m, 80, 24)
	waitView(t, tm, p, contains("multi · run 2 of 3"))

	watch := loadReport(load.Watch, 38, 40, -5)
	watch.Errors, watch.Retries, watch.RedisCallsPerRequest = 1526, 44012, 50.7
	final := finish(t, tm, 80, "compare", loadReport(load.Lua, 40, 40, 0), loadReport(load.Multi, 123, 40, 207.5), watch)
	mustShow(t, "the comparison", final, "bucketctl:load:api", "207.50%", "over-granted: 123 allowed where at most 40 could be",
		"exact: 40 allowed", "44,012 retries and 1,526 failed requests", "50.70")
}

// A narrow, short terminal drops the side panel and the chart but keeps the numbers.
func TestLoadViewNarrow(t *testing.T) {
	m := NewLoad(newSnapSource(loadSnap(3*time.Second, load.Lua)).get, LoadOptions{Interval: 10 * time.Millisecond, Styles: &testStyles})
	tm, p := run(t, m, 50, 12)
	screen := waitView(t, tm, p, contains("30%", "p99 3.18ms", "tokens 0.42 / 10"))
	checkSize(t, screen, 50, 12)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	screen = waitView(t, tm, p, contains("Redis cost"))
	checkSize(t, screen, 50, 12)
}

// finish ends the run with reports and returns the program's last screen, checked against
// its width and the golden file name.
func finish(t *testing.T, tm *teatest.TestModel, w int, name string, reports ...load.Report) string {
	t.Helper()
	tm.Send(LoadDoneMsg{Reports: reports})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final := tm.FinalModel(t).(probe).View()
	checkWidth(t, final, w)
	golden(t, name, final)
	return final
}

// mustShow fails the test for each of wants that screen lacks.
func mustShow(t *testing.T, what, screen string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(screen, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, screen)
		}
	}
}

func checkWidth(t *testing.T, s string, w int) {
	t.Helper()
	for i, l := range strings.Split(s, "\n") {
		if n := len([]rune(stripANSI(l))); n > w {
			t.Errorf("line %d is %d cells wide, want <= %d: %q", i+1, n, w, l)
		}
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	esc := false
	for _, r := range s {
		switch {
		case r == '\x1b':
			esc = true
		case esc && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			esc = false
		case !esc:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestLoadProgressLine(t *testing.T) {
	s := loadSnap(3200*time.Millisecond, load.Watch)
	s.Retries, s.Errors = 120, 7
	got := LoadProgressLine(s)
	want := "3.2s/10s  allowed 49  denied 198376  errors 7  last second 10/s allowed, 52.9k/s denied  retries 120  p99 3.18ms  tokens 0.42/10"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestFormatLatency(t *testing.T) {
	for in, want := range map[float64]string{0: "–", 0.4123: "412µs", 1.234: "1.23ms", 12.34: "12.3ms",
		123.4: "123ms", 1500: "1.5s"} {
		if got := FormatLatency(in); got != want {
			t.Errorf("FormatLatency(%v) = %q, want %q", in, got, want)
		}
	}
}

// The report names errors and unsent arrivals, and folds a wide histogram to fit.
func TestRenderLoadReportDetails(t *testing.T) {
	r := loadReport(load.Multi, 123, 40, 207.5)
	r.Arrival, r.ArrivalRate, r.BurstSize, r.BurstEveryS = load.Poisson, 500, 50, 2
	r.Errors, r.Unsent = 42, 17
	r.ErrorSamples = []load.ErrorSample{{Message: "dial tcp: connection refused", Count: 40}, {Message: "i/o timeout", Count: 2}}
	r.Histogram = nil
	for i := range 14 {
		r.Histogram = append(r.Histogram, load.Band{UpToMS: float64(i + 1), Count: int64(i * 10)})
	}
	out := RenderLoadReport(testStyles, r, 80)
	mustShow(t, "report", out, "poisson 500/s + 50 every 2s", "over-grant 207.50% ✖", "40× dial tcp: connection refused",
		"unsent 17", "raise --concurrency")
	bars := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  ≤ ") {
			bars++
		}
	}
	if bars != 7 {
		t.Errorf("%d histogram rows for 14 bands, want them folded to 7:\n%s", bars, out)
	}
	checkWidth(t, out, 80)
}
