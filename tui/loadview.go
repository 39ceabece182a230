package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/load"
)

// LoadSource returns the load run so far. load.Engine.Snapshot is one: it reads the
// engine's own counters and sends nothing to Redis.
type LoadSource func() load.Snapshot

// LoadOptions configure the load test's live view. Zero values take the defaults.
type LoadOptions struct {
	// Title describes the run on the header's right: "lua · closed loop · 64 workers".
	Title string
	// Runs are a comparison's strategies in the order they run, for "run 2 of 3"; nil for
	// a single run.
	Runs []load.Strategy
	// Interval is the time between snapshots (default 250 ms).
	Interval time.Duration
	// Styles default to NewStyles(nil): the terminal's colours, NO_COLOR honoured.
	Styles *Styles
	// Stop asks the run to stop early (q or ctrl+c). The report so far then arrives as a
	// LoadDoneMsg; a second q quits at once.
	Stop func()
}

// LoadDoneMsg ends the live view: it shows the reports (one run's, or a comparison's
// runs in order) and quits, leaving them on the terminal.
type LoadDoneMsg struct{ Reports []load.Report }

type loadKeys struct{ GlobalKeys }

func (k loadKeys) ShortHelp() []key.Binding  { return k.bindings() }
func (k loadKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.bindings()} }

// Load is the live view of a load run: progress, decisions per second (chart), the
// bucket's token level, latency so far; at the end, the report.
type Load struct {
	frame
	src  LoadSource
	opts LoadOptions
	keys loadKeys
	bar  progress.Model

	snap     load.Snapshot
	has      bool
	reports  []load.Report
	stopping bool
	done     bool
}

// NewLoad returns the live view reading snapshots from src.
func NewLoad(src LoadSource, opts LoadOptions) Load {
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.Styles == nil {
		s := NewStyles(nil)
		opts.Styles = &s
	}
	st := *opts.Styles
	keys := loadKeys{NewGlobalKeys()}
	keys.Quit.SetHelp("q", "stop and report")
	return Load{
		frame: newFrame(st), src: src, opts: opts, keys: keys,
		bar: progress.New(progress.WithSolidFill(string(colAccent.TrueColor)), progress.WithoutPercentage(),
			progress.WithColorProfile(st.Renderer().ColorProfile())),
	}
}

type loadTickMsg struct{}
type loadSnapMsg load.Snapshot

// Init takes the first snapshot and starts the ticker.
func (m Load) Init() tea.Cmd { return tea.Batch(m.read(), m.tick()) }

func (m Load) tick() tea.Cmd {
	return tea.Tick(m.opts.Interval, func(time.Time) tea.Msg { return loadTickMsg{} })
}

func (m Load) read() tea.Cmd {
	src := m.src
	return func() tea.Msg { return loadSnapMsg(src()) }
}

// Update handles keys, resizes, ticks, snapshots and the end of the run.
func (m Load) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.keys.Quit):
			if m.done || m.stopping {
				return m, tea.Quit
			}
			m.stopping = true
			if m.opts.Stop != nil {
				m.opts.Stop()
			}
		case key.Matches(msg, m.keys.Help):
			m.showHelp = !m.showHelp
		}
	case loadTickMsg:
		if !m.done {
			return m, tea.Batch(m.tick(), m.read())
		}
	case loadSnapMsg:
		if !m.done {
			m.snap, m.has = load.Snapshot(msg), true
		}
	case LoadDoneMsg:
		m.reports, m.done = msg.Reports, true
		return m, tea.Quit
	}
	return m, nil
}

// View renders the live screen, or the report once the run is done.
func (m Load) View() string {
	if m.done {
		return m.reportView()
	}
	s := m.snap
	title := m.st.Title.Render("bucketctl load")
	if m.has {
		title += " " + m.st.Value.Render(s.Key)
	}
	right := m.opts.Title
	if n := len(m.opts.Runs); n > 1 && m.has {
		for i, r := range m.opts.Runs {
			if r == s.Strategy {
				right = fmt.Sprintf("%s · run %d of %d", r, i+1, n)
			}
		}
	}
	if m.stopping {
		right = "stopping… " + right
	}
	top := []string{header(title, m.st.Subtle.Render(right), m.w), m.progressLine()}
	bottom := helpFooter(m.help, m.keys, m.showHelp, m.st, m.w,
		"the view adds none; it reads the load engine's own counters, and the level is the last decision's")
	bodyH := m.h - lineCount(top) - lineCount(bottom) - 1
	return screen(m.w, m.h, top, m.body(m.w, bodyH), bottom)
}

// progressLine is the bar and how far the run is, in time and requests.
func (m Load) progressLine() string {
	s := m.snap
	what := "starting…"
	if m.has {
		what = FormatDuration(s.Elapsed.Truncate(100*time.Millisecond)) + " of " + FormatDuration(s.Duration)
		if s.Requests > 0 {
			what = groupDigits(int(s.Decisions)) + " of " + groupDigits(int(s.Requests)) + " requests · " +
				FormatDuration(s.Elapsed.Truncate(100*time.Millisecond))
		}
	}
	p := s.Progress()
	text := fmt.Sprintf(" %3.0f%% · %s", math.Floor(p*100), what)
	bw := max(10, m.w-lipgloss.Width(text))
	m.bar.Width = bw
	return m.bar.ViewAs(p) + m.st.Subtle.Render(text)
}

// sidePanelW is the width of the latency and level panel beside the chart.
const sidePanelW = 24

func (m Load) body(w, h int) string {
	if !m.has {
		return m.st.Subtle.Render("waiting for the first snapshot…")
	}
	s := m.snap
	lines := []string{m.countsLine(), m.lastSecondLine()}
	wide := w >= 64
	if !wide {
		lines = append(lines, m.latencyLine(), m.tokensLine(w))
	}
	lines = append(lines, "")
	room := h - len(lines)
	chartW := w
	if wide {
		chartW = w - sidePanelW - 2
	}
	chart := ""
	if room >= 6 {
		chart = ratesChart(m.st, s, chartW, room-1)
	}
	if chart == "" && room >= 1 {
		chart = m.st.Subtle.Render("the chart starts after the first second")
	}
	chart = m.st.Subtle.Render("─ allowed/s  ") + m.st.Bad.Render("⣿") + m.st.Subtle.Render(" denied/s  (log scale)") + "\n" + chart
	if wide {
		panel := m.sidePanel()
		chart = lipgloss.JoinHorizontal(lipgloss.Top, m.st.Renderer().NewStyle().Width(chartW+2).Render(chart), panel)
	}
	return strings.Join(lines, "\n") + "\n" + chart
}

func (m Load) countsLine() string {
	s := m.snap
	st := m.st
	parts := []string{
		st.Label.Render("allowed ") + st.Good.Render(groupDigits(int(s.Allowed))),
		st.Label.Render("denied ") + st.Value.Render(groupDigits(int(s.Denied))),
	}
	errs := st.Value.Render("0")
	if s.Errors > 0 {
		errs = st.Bad.Render(groupDigits(int(s.Errors)))
	}
	parts = append(parts, st.Label.Render("errors ")+errs)
	if s.Retries > 0 {
		parts = append(parts, st.Label.Render("retries ")+st.Warn.Render(groupDigits(int(s.Retries))))
	}
	if s.Elapsed > 0 {
		ops := float64(s.Allowed+s.Denied) / s.Elapsed.Seconds()
		parts = append(parts, st.Value.Render(FormatTokens(ops))+st.Label.Render(" ops/s"))
	}
	return strings.Join(parts, st.Subtle.Render(" · "))
}

// lastSecondLine is the last complete second's allowed and denied counts.
func (m Load) lastSecondLine() string {
	s := m.snap
	n := completeSeconds(s)
	if n == 0 {
		return m.st.Subtle.Render("last second: collecting…")
	}
	p := s.PerSecond[n-1]
	return m.st.Label.Render("last second: allowed ") + m.st.Good.Render(FormatRate(float64(p.Allowed))) +
		m.st.Label.Render(" · denied ") + m.st.Bad.Render(FormatRate(float64(p.Denied))) +
		m.st.Subtle.Render(fmt.Sprintf(" · bucket refills %s", FormatRate(s.Spec.Rate)))
}

func (m Load) latencyLine() string {
	l := m.snap.Latency
	return m.st.Label.Render("latency ") + fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s",
		FormatLatency(l.P50), FormatLatency(l.P90), FormatLatency(l.P99), FormatLatency(l.Max))
}

func (m Load) tokensLine(w int) string {
	s := m.snap
	if !s.HasTokens {
		return m.st.Label.Render("tokens ") + m.st.Subtle.Render("–")
	}
	text := m.st.Label.Render("tokens ") + m.st.Value.Render(FormatTokens(s.Tokens)) +
		m.st.Subtle.Render(" / "+FormatTokens(s.Spec.Capacity)) + " "
	return text + m.st.Bar(max(0, min(30, w-lipgloss.Width(text))), s.Tokens/s.Spec.Capacity)
}

// sidePanel is the latency percentiles and the token level, sidePanelW wide.
func (m Load) sidePanel() string {
	s := m.snap
	st := m.st
	row := func(label string, v float64) string {
		return "  " + st.Label.Render(fmt.Sprintf("%-7s", label)) + padLeft(FormatLatency(v), 8)
	}
	l := s.Latency
	lines := []string{st.Header.Render("latency so far"),
		row("p50", l.P50), row("p90", l.P90), row("p99", l.P99), row("p99.9", l.P999), row("max", l.Max),
		"", st.Header.Render("bucket level")}
	if s.HasTokens {
		lines = append(lines,
			"  "+st.Value.Render(FormatTokens(s.Tokens))+st.Subtle.Render(" / "+FormatTokens(s.Spec.Capacity)+" tokens"),
			"  "+st.Bar(sidePanelW-4, s.Tokens/s.Spec.Capacity))
	} else {
		lines = append(lines, "  "+st.Subtle.Render("no decision yet"))
	}
	if s.Decisions > 0 {
		lines = append(lines, "", st.Label.Render("  calls/request ")+
			st.Value.Render(strconv.FormatFloat(float64(s.Calls)/float64(s.Decisions), 'f', 2, 64)))
	}
	return strings.Join(lines, "\n")
}

// completeSeconds is how many whole seconds of the run are over.
func completeSeconds(s load.Snapshot) int {
	n := int(s.Elapsed / time.Second)
	if !s.Running {
		n = len(s.PerSecond)
	}
	return min(n, len(s.PerSecond))
}

// ratesChart draws allowed/s (a line) and denied/s (braille) per complete second on a log
// scale in a w×h box; "" when there is no whole second yet or no room.
func ratesChart(st Styles, s load.Snapshot, w, h int) string {
	n := completeSeconds(s)
	if n == 0 || w < 24 || h < 5 {
		return ""
	}
	logv := func(v int64) float64 { return math.Log10(1 + float64(v)) }
	top := 1.0
	for _, p := range s.PerSecond[:n] {
		top = math.Max(top, math.Ceil(logv(max(p.Allowed, p.Denied))))
	}
	span := math.Max(10, float64(n))
	var rowH float64 // the Y value of one row, set once the graph's height is known
	yLabel := func(_ int, v float64) string {
		d := math.Round(v)
		if math.Abs(v-d) > rowH/2+1e-9 {
			return ""
		}
		if d == 0 {
			return "0"
		}
		return FormatTokens(math.Pow(10, d))
	}
	xLabel := func(_ int, v float64) string {
		return FormatDuration(time.Duration(math.Round(v)) * time.Second)
	}
	lc := linechart.New(w, h, 0, span, 0, top,
		linechart.WithXYSteps(max(6, w/6), 1),
		linechart.WithStyles(st.Subtle, st.Subtle, st.Good),
		linechart.WithXLabelFormatter(xLabel),
		linechart.WithYLabelFormatter(yLabel))
	rowH = top / float64(max(1, lc.GraphHeight()))
	lc.DrawXYAxisAndLabel()

	// x of second i is its end; a lone first second is drawn as a point.
	pt := func(i int, v int64) canvas.Float64Point {
		return canvas.Float64Point{X: float64(i + 1), Y: logv(v)}
	}
	g := graph.NewBrailleGrid(lc.GraphWidth(), lc.GraphHeight(), lc.MinX(), lc.MaxX(), lc.MinY(), lc.MaxY())
	prev := g.GridPoint(pt(0, s.PerSecond[0].Denied))
	g.Set(prev)
	for i := 1; i < n; i++ {
		p := g.GridPoint(pt(i, s.PerSecond[i].Denied))
		for _, q := range graph.GetLinePoints(prev, p) {
			g.Set(q)
		}
		prev = p
	}
	graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{X: lc.Origin().X + 1}, g.BraillePatterns(), st.Bad)
	for i := 0; i < n; i++ {
		a := pt(max(0, i-1), s.PerSecond[max(0, i-1)].Allowed)
		lc.DrawLineWithStyle(a, pt(i, s.PerSecond[i].Allowed), runes.ThinLineStyle, st.Good)
	}
	return lc.View()
}

// FormatLatency writes a latency in milliseconds with three significant digits at most:
// 412µs, 1.23ms, 12.3ms, 123ms, 1.2s.
func FormatLatency(msec float64) string {
	switch {
	case msec <= 0 || math.IsNaN(msec):
		return "–"
	case msec < 1:
		return strconv.FormatFloat(math.Round(msec*1000), 'f', 0, 64) + "µs"
	case msec < 10:
		return trimFloat(msec, 2) + "ms"
	case msec < 100:
		return trimFloat(msec, 1) + "ms"
	case msec < 1000:
		return strconv.FormatFloat(math.Round(msec), 'f', 0, 64) + "ms"
	}
	return FormatDuration(time.Duration(msec * float64(time.Millisecond)))
}

// LoadProgressLine is one plain line of a run's progress, for a terminal-less stderr:
// "3s/10s  allowed 39  denied 148374  errors 0  last second 10/s allowed, 52.9k/s denied  p99 3.18ms  tokens 0.42/10".
func LoadProgressLine(s load.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s", FormatDuration(s.Elapsed.Round(100*time.Millisecond)), FormatDuration(s.Duration))
	if s.Requests > 0 {
		fmt.Fprintf(&b, "  requests %d/%d", s.Decisions, s.Requests)
	}
	fmt.Fprintf(&b, "  allowed %d  denied %d  errors %d", s.Allowed, s.Denied, s.Errors)
	if n := completeSeconds(s); n > 0 {
		last := s.PerSecond[n-1]
		fmt.Fprintf(&b, "  last second %s allowed, %s denied", FormatRate(float64(last.Allowed)), FormatRate(float64(last.Denied)))
	}
	if s.Retries > 0 {
		fmt.Fprintf(&b, "  retries %d", s.Retries)
	}
	fmt.Fprintf(&b, "  p99 %s", FormatLatency(s.Latency.P99))
	if s.HasTokens {
		fmt.Fprintf(&b, "  tokens %s/%s", FormatTokens(s.Tokens), FormatTokens(s.Spec.Capacity))
	}
	return b.String()
}

func (m Load) reportView() string {
	if len(m.reports) == 1 {
		return RenderLoadReport(m.st, m.reports[0], m.w)
	}
	return RenderLoadComparison(m.st, m.reports, m.w)
}

// RenderLoadReport writes a run's report for a person, w cells wide: counts, throughput,
// the theoretical maximum and over-grant, latency percentiles and a histogram.
func RenderLoadReport(st Styles, r load.Report, w int) string {
	w = max(w, 40)
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }
	add(trunc(st.Title.Render("bucketctl load")+" "+st.Value.Render(r.Key), w))
	how := string(r.Strategy) + " · " + arrivalText(r) + " · " + Plural(r.Concurrency, "worker")
	if r.Pipeline > 1 {
		how += " · pipeline " + strconv.Itoa(r.Pipeline)
	}
	how += " · measured " + trimFloat(r.DurationS, 3) + "s"
	spec := specText(r)
	if r.Server != "" {
		spec += onServer(r.Server)
	}
	add(subtleWrapped(st, how+"\n"+spec, w)...)
	if r.Interrupted {
		add(st.Warn.Render("interrupted: the report so far"))
	}
	add("")

	kv := func(label, value string) string { return st.Label.Render(label+" ") + value }
	errs := st.Value.Render(groupDigits(int(r.Errors)))
	if r.Errors > 0 {
		errs = st.Bad.Render(groupDigits(int(r.Errors)))
	}
	add(kv("requests", st.Value.Render(groupDigits(int(r.Requests)))) + "   " +
		kv("throughput", st.Value.Render(FormatRate(r.OpsPerSec))) + "   " +
		kv("redis calls/request", st.Value.Render(strconv.FormatFloat(r.RedisCallsPerRequest, 'f', 2, 64))))
	counts := kv("allowed", st.Good.Render(groupDigits(int(r.Allowed)))) + "   " +
		kv("denied", st.Value.Render(groupDigits(int(r.Denied)))) + "   " + kv("errors", errs)
	if r.Retries > 0 {
		counts += "   " + kv("retries", st.Warn.Render(groupDigits(int(r.Retries))))
	}
	if r.Unsent > 0 {
		counts += "   " + kv("unsent", st.Warn.Render(groupDigits(int(r.Unsent))))
	}
	add(counts)
	add(kv("theoretical max", st.Value.Render(groupDigits(int(r.TheoreticalMax)))) +
		st.Subtle.Render(fmt.Sprintf(" (capacity + rate × %ss)", trimFloat(r.DurationS, 2))) + "   " +
		kv("over-grant", overGrant(st, r.OverGrantPct)))
	for i, e := range r.ErrorSamples {
		if i == 3 {
			add(st.Subtle.Render(fmt.Sprintf("  … %d more kinds of error (see -o json)", len(r.ErrorSamples)-3)))
			break
		}
		add(trunc(st.Bad.Render("  ✖ ")+st.Subtle.Render(groupDigits(int(e.Count))+"× ")+oneLine(e.Message), w))
	}
	if r.Unsent > 0 {
		add(st.Subtle.Render(trunc("  unsent: due arrivals no worker was free to send; raise --concurrency", w)))
	}
	add("")
	l := r.LatencyMS
	add(kv("latency", fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s",
		st.Value.Render(FormatLatency(l.P50)), st.Value.Render(FormatLatency(l.P90)), st.Value.Render(FormatLatency(l.P99)),
		st.Value.Render(FormatLatency(l.P999)), st.Value.Render(FormatLatency(l.Max)))))
	add(histogramLines(st, r.Histogram, w)...)
	for i, s := range lines {
		lines[i] = trunc(s, w)
	}
	return strings.Join(lines, "\n")
}

func specText(r load.Report) string {
	return fmt.Sprintf("capacity %s · rate %s · cost %s", FormatTokens(r.Capacity), FormatRate(r.Rate), FormatTokens(r.Cost))
}

// subtleWrapped word-wraps text to w cells, each line in the subtle style.
func subtleWrapped(st Styles, text string, w int) []string {
	lines := strings.Split(ansi.Wordwrap(text, w, ""), "\n")
	for i, l := range lines {
		lines[i] = st.Subtle.Render(l)
	}
	return lines
}

func arrivalText(r load.Report) string {
	switch r.Arrival {
	case load.Constant:
		return "constant " + FormatRate(r.ArrivalRate)
	case load.Poisson:
		s := "poisson " + FormatRate(r.ArrivalRate)
		if r.BurstSize > 0 {
			s += fmt.Sprintf(" + %d every %s", r.BurstSize, FormatDuration(time.Duration(r.BurstEveryS*float64(time.Second))))
		}
		return s
	}
	return "closed loop"
}

func overGrant(st Styles, pct float64) string {
	s := strconv.FormatFloat(pct, 'f', 2, 64) + "%"
	if pct > 0 {
		return st.Bad.Render(s + " ✖ beyond the maximum")
	}
	return st.Good.Render(s + " ✔")
}

// maxHistRows bounds the histogram: adjacent bands are merged to fit.
const maxHistRows = 8

// histogramLines draws the latency bands as horizontal bars with counts and shares.
func histogramLines(st Styles, bands []load.Band, w int) []string {
	if len(bands) == 0 {
		return nil
	}
	for len(bands) > maxHistRows {
		merged := make([]load.Band, 0, (len(bands)+1)/2)
		for i := 0; i < len(bands); i += 2 {
			b := bands[i]
			if i+1 < len(bands) {
				b.UpToMS, b.Count = bands[i+1].UpToMS, b.Count+bands[i+1].Count
			}
			merged = append(merged, b)
		}
		bands = merged
	}
	var total, top int64
	for _, b := range bands {
		total += b.Count
		top = max(top, b.Count)
	}
	labelW, countW := 9, max(6, len(groupDigits(int(top)))+1)
	barW := max(8, min(40, w-labelW-countW-8))
	lines := make([]string, 0, len(bands))
	for _, b := range bands {
		label := "≤ " + FormatLatency(b.UpToMS)
		if b.UpToMS >= 3_600_000 {
			label = "> 5m"
		}
		share := float64(b.Count) / float64(max(1, total))
		lines = append(lines, "  "+st.Label.Render(fmt.Sprintf("%-*s", labelW, label))+
			hbar(st, barW, float64(b.Count)/float64(max(1, top)))+
			padLeft(groupDigits(int(b.Count)), countW)+st.Subtle.Render(padLeft(FormatPercent(share), 5)))
	}
	return lines
}

// hbar is a histogram bar of width cells filled to frac, with eighth-cell precision.
func hbar(st Styles, width int, frac float64) string {
	s, used := eighthCells(width, frac)
	return st.Title.Render(s) + strings.Repeat(" ", width-used)
}

// RenderLoadComparison writes a comparison of strategies run on the same spec for the
// same time: one row per run, then what it shows.
func RenderLoadComparison(st Styles, rs []load.Report, w int) string {
	w = max(w, 40)
	if len(rs) == 0 {
		return ""
	}
	r0 := rs[0]
	var lines []string
	lines = append(lines, trunc(st.Title.Render("bucketctl load --compare")+" "+
		st.Value.Render(strings.TrimSuffix(r0.Key, ":"+string(r0.Strategy))), w))
	about := fmt.Sprintf("%s · %s · each run %s on a fresh key%s\n", arrivalText(r0), Plural(r0.Concurrency, "worker"),
		FormatDuration(r0.Duration().Round(100*time.Millisecond)), onServer(r0.Server)) + specText(r0)
	lines = append(append(lines, subtleWrapped(st, about, w)...), "")
	cols := []string{"strategy", "ops/s", "calls/req", "allowed", "max", "over-grant", "errors", "retries", "p99"}
	rows := [][]string{cols}
	for _, r := range rs {
		rows = append(rows, []string{string(r.Strategy), FormatTokens(r.OpsPerSec),
			strconv.FormatFloat(r.RedisCallsPerRequest, 'f', 2, 64), groupDigits(int(r.Allowed)),
			groupDigits(int(r.TheoreticalMax)), strconv.FormatFloat(r.OverGrantPct, 'f', 2, 64) + "%",
			groupDigits(int(r.Errors)), groupDigits(int(r.Retries)), FormatLatency(r.LatencyMS.P99)})
	}
	widths := make([]int, len(cols))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	for ri, row := range rows {
		var b strings.Builder
		for i, c := range row {
			cell := c
			if i == 0 {
				cell = fmt.Sprintf("%-*s", widths[i], c)
			} else {
				cell = padLeft(c, widths[i])
			}
			switch {
			case ri == 0:
				cell = st.Header.Render(cell)
			case i == 5 && rs[ri-1].OverGrantPct > 0:
				cell = st.Bad.Render(cell)
			case i == 6 && rs[ri-1].Errors > 0:
				cell = st.Warn.Render(cell)
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
		}
		lines = append(lines, trunc(b.String(), w))
	}
	lines = append(lines, "")
	for _, r := range rs {
		lines = append(lines, trunc("  "+st.Value.Render(fmt.Sprintf("%-*s", widths[0], r.Strategy))+"  "+verdict(st, r), w))
	}
	if rs[0].Interrupted || rs[len(rs)-1].Interrupted {
		lines = append(lines, "", st.Warn.Render("interrupted: the runs so far"))
	}
	return strings.Join(lines, "\n")
}

func onServer(addr string) string {
	if addr == "" {
		return ""
	}
	return " · redis " + addr
}

// verdict says in a few words what a run of a comparison showed.
func verdict(st Styles, r load.Report) string {
	switch {
	case r.OverGrantPct > 0:
		return st.Bad.Render(fmt.Sprintf("over-granted: %s allowed where at most %s could be",
			groupDigits(int(r.Allowed)), groupDigits(int(r.TheoreticalMax))))
	case r.Errors > 0 && r.Retries > 0:
		return st.Warn.Render(fmt.Sprintf("no over-grant, but %s retries and %s failed requests",
			groupDigits(int(r.Retries)), groupDigits(int(r.Errors))))
	case r.Errors > 0:
		return st.Warn.Render(fmt.Sprintf("%s requests failed", groupDigits(int(r.Errors))))
	}
	return st.Good.Render(fmt.Sprintf("exact: %s allowed, none beyond the maximum", groupDigits(int(r.Allowed))))
}

// Done reports whether the run ended and the report is shown.
func (m Load) Done() bool { return m.done }
