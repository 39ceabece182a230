package tui

import (
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/tui/format"
	"github.com/bucketctl/bucketctl/tui/termtest"
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
	mustShow(t, "80x24 screen", screen, "bucketctl:load:api", "allowed 59", "denied 249,616", "55,483 ops/s", "errors 0",
		"last second: allowed 10/s · denied 50,002/s", "p99      3.18ms", "p99.9    7.54ms", "0.42 / 10 tokens",
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
	screen = onTerminal(t, tm, 120, 40, RenderLoadReport(testStyles, r, 120))
	mustShow(t, "the final report", screen, "theoretical max 40", "over-grant 0.00% ✔", "interrupted: the report so far",
		"p99.9 7.54ms", "≤ 2ms", "24,107", "≤ 10ms")
	golden(t, "report", screen)
}

// The live view leaves the terminal when the run ends, and the report printed after it is
// on the terminal as a whole, exactly as piped: every row of the histogram, which adds up
// to the requests. (A report drawn as the program's last frame lost its last row: bubbletea
// erases the line under the cursor when a program ends.)
func TestLoadReportOnTerminalIsThePipedReport(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 12}} {
		w, h := size[0], size[1]
		m := NewLoad(newSnapSource(loadSnap(2500*time.Millisecond, load.Lua)).get,
			LoadOptions{Title: "lua", Interval: 10 * time.Millisecond, Styles: &testStyles})
		tm, p := run(t, m, w, h)
		waitView(t, tm, p, contains("25% · 2.5s of 10s"))
		r := loadReport(load.Lua, 40, 40, 0)
		r.Histogram = append(r.Histogram, load.Band{UpToMS: 20, Count: 13})
		r.Requests += 13
		piped := RenderLoadReport(testStyles, r, min(w, 80))
		screen := onTerminal(t, tm, w, h, piped)
		if screen != piped {
			t.Errorf("%dx%d: the terminal shows\n%s\nwhere the piped report is\n%s", w, h, screen, piped)
		}
		if got := histogramTotal(t, screen); got != r.Requests {
			t.Errorf("%dx%d: the histogram's rows add up to %d of %d requests:\n%s", w, h, got, r.Requests, screen)
		}
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
	rs := []load.Report{loadReport(load.Lua, 40, 40, 0), loadReport(load.Multi, 123, 40, 207.5), watch}
	screen := onTerminal(t, tm, 80, 24, RenderLoadComparison(testStyles, rs, 80))
	mustShow(t, "the comparison", screen, "bucketctl:load:api", "207.50%", "over-granted: 123 allowed where at most 40 could be",
		"exact: 40 allowed", "44,012 retries and 1,526 failed requests", "50.70")
	// Every strategy has its row in the table and its line in the summary below it.
	for _, s := range load.Strategies {
		if n := strings.Count(screen, "\n"+string(s)+" ") + strings.Count(screen, "\n  "+string(s)+" "); n != 2 {
			t.Errorf("%s shows in %d of the table and the summary:\n%s", s, n, screen)
		}
	}
	golden(t, "compare", screen)
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

// onTerminal ends the run and returns what the terminal shows once the program ended and
// the caller printed printed after it, as cmd does: the program's whole output replayed on
// a w×h terminal, then printed.
func onTerminal(t *testing.T, tm *teatest.TestModel, w, h int, printed string) string {
	t.Helper()
	tm.Send(LoadDoneMsg{})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if m := tm.FinalModel(t).(probe).Model.(Load); !m.Done() || m.Width() != w {
		t.Fatalf("final model: done %v, width %d", m.Done(), m.Width())
	}
	out, err := io.ReadAll(tm.FinalOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	term := termtest.New(w, h)
	_, _ = term.Write(out)
	if left := term.String(); left != "" {
		t.Errorf("the live view left this on the terminal:\n%q", left)
	}
	term.ONLCR = true
	_, _ = term.Write([]byte(printed + "\n"))
	screen := term.String()
	checkWidth(t, screen, w)
	return screen
}

// histogramTotal adds up the counts of the histogram rows in a report.
func histogramTotal(t *testing.T, report string) int64 {
	t.Helper()
	var total int64
	for _, l := range strings.Split(report, "\n") {
		if !strings.HasPrefix(l, "  ≤ ") && !strings.HasPrefix(l, "  > ") {
			continue
		}
		f := strings.Fields(l)
		n, err := strconv.ParseInt(strings.ReplaceAll(f[len(f)-2], ",", ""), 10, 64)
		if err != nil {
			t.Fatalf("histogram row %q: %v", l, err)
		}
		total += n
	}
	return total
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
	want := "3.2s/10s  allowed 49  denied 198,376  errors 7  last second 10/s allowed, 52,870/s denied  retries 120  p99 3.18ms  tokens 0.42/10"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestFormatLatency(t *testing.T) {
	for in, want := range map[float64]string{0: "–", 0.4123: "412µs", 1.234: "1.23ms", 12.34: "12.3ms",
		123.4: "123ms", 1500: "1.5s"} {
		if got := format.Latency(in); got != want {
			t.Errorf("format.Latency(%v) = %q, want %q", in, got, want)
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

// Until the terminal's size is known the live view is one line, so its first frame can
// never scroll a small terminal (lines scrolled off cannot be cleared at the end).
func TestLoadViewIsOneLineUntilSized(t *testing.T) {
	m := NewLoad(newSnapSource(loadSnap(2500*time.Millisecond, load.Lua)).get,
		LoadOptions{Interval: 10 * time.Millisecond, Styles: &testStyles})
	p := &probe{Model: m, views: make(chan string, 1)}
	tm := teatest.NewTestModel(t, *p) // no size: as when the first frame comes before it
	t.Cleanup(func() { _ = tm.Quit() })
	screen := waitView(t, tm, p, contains("25% · 2.5s of 10s"))
	if n := strings.Count(screen, "\n"); n != 0 {
		t.Fatalf("%d lines before the size is known:\n%s", n+1, screen)
	}
	tm.Send(tea.WindowSizeMsg{Width: 100, Height: 12})
	screen = waitView(t, tm, p, contains("allowed/s"))
	checkSize(t, screen, 100, 12)
}

// Key names and error messages reach the terminal escaped.
func TestLoadViewsEscapeKeys(t *testing.T) {
	const hostile = "rl:\x1b]52;c;aGk=\x07:\x1b[2J"
	r := loadReport(load.Lua, 40, 40, 0)
	r.Key = hostile
	r.Errors, r.ErrorSamples = 1, []load.ErrorSample{{Message: "ERR \x1b[2J " + hostile, Count: 1}}
	c := r
	c.Key = hostile + ":lua"
	s := loadSnap(1500*time.Millisecond, load.Lua)
	s.Key = hostile
	m := NewLoad(newSnapSource(s).get, LoadOptions{Interval: 10 * time.Millisecond, Styles: &testStyles})
	tm, p := run(t, m, 120, 30)
	live := waitView(t, tm, p, contains("15%"))
	for what, out := range map[string]string{"report": RenderLoadReport(testStyles, r, 120),
		"comparison": RenderLoadComparison(testStyles, []load.Report{c}, 120), "live view": live} {
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `rl:\x1b]52;c;aGk=\a:\x1b[2J`) {
			t.Errorf("%s: %q", what, out)
		}
	}
}
