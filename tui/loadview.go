package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/tui/format"
)

// LoadOptions configure the load test's live view. Zero values take the defaults.
type LoadOptions struct {
	Title    string          // the run, on the header's right: "lua · closed loop · 64 workers"
	Runs     []load.Strategy // a comparison's strategies in order, for "run 2 of 3"
	Interval time.Duration   // between snapshots (default 250 ms)
	Styles   *Styles         // default: the terminal's colours, NO_COLOR honoured
	Stop     func()          // asks the run to stop early (q); a second q quits at once
}

// LoadDoneMsg ends the live view: it clears itself and quits, and the caller prints the
// report (RenderLoadReport): bubbletea would cut a tall frame.
type LoadDoneMsg struct{}

// Load is the live view of a load run.
type Load struct {
	frame
	src  func() load.Snapshot // the run so far, with no Redis command (load.Session.Snapshot)
	opts LoadOptions
	keys globalKeys
	bar  progress.Model

	snap                          load.Snapshot
	has, stopping, quitting, done bool // quitting: a second q, without waiting for the end
	sized                         bool // until sized, one line: a first frame's scrolled-off top stays
}

func NewLoad(src func() load.Snapshot, opts LoadOptions) Load {
	if opts.Interval <= 0 {
		opts.Interval = 250 * time.Millisecond
	}
	if opts.Styles == nil {
		s := NewStyles(lipgloss.ColorProfile())
		opts.Styles = &s
	}
	m := Load{frame: newFrame(*opts.Styles), src: src, opts: opts, keys: newGlobalKeys(),
		bar: progress.New(progress.WithSolidFill(string(colAccent.TrueColor)), progress.WithoutPercentage(),
			progress.WithColorProfile(opts.Styles.r.ColorProfile()))}
	m.keys.Quit.SetHelp("q", "stop and report")
	return m
}

type loadSnapMsg load.Snapshot

func (m Load) Init() tea.Cmd { return tea.Batch(m.read(), tick(m.opts.Interval)) }

func (m Load) read() tea.Cmd { return func() tea.Msg { return loadSnapMsg(m.src()) } }

func (m Load) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
		m.sized = true
	case tea.KeyMsg:
		return eachKey(m, msg, nil, nil, Load.key)
	case tickMsg:
		if !m.done {
			return m, tea.Batch(tick(m.opts.Interval), m.read())
		}
	case loadSnapMsg:
		if !m.done {
			m.snap, m.has = load.Snapshot(msg), true
		}
	case LoadDoneMsg:
		m.done = true
		return m, tea.Quit
	}
	return m, nil
}

func (m Load) key(msg tea.KeyMsg) (Load, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Quit):
		if m.done || m.stopping {
			m.quitting = true
			return m, tea.Quit
		}
		m.stopping = true
		if m.opts.Stop != nil {
			m.opts.Stop()
		}
	case key.Matches(msg, m.keys.Help):
		m.showHelp = !m.showHelp
	}
	return m, nil
}

// View is empty once the run is done or the view quits, so the report printed next stands alone.
func (m Load) View() string {
	if m.done || m.quitting {
		return ""
	}
	if !m.sized {
		return m.progressLine()
	}
	s := m.snap
	title := m.st.Title.Render("bucketctl load")
	if m.has {
		title += " " + m.st.Value.Render(format.SafeKey(s.Key))
	}
	right := m.opts.Title
	if i := slices.Index(m.opts.Runs, s.Strategy); len(m.opts.Runs) > 1 && m.has && i >= 0 {
		right = fmt.Sprintf("%s · run %d of %d", s.Strategy, i+1, len(m.opts.Runs))
	}
	if m.stopping {
		right = "stopping… " + right
	}
	top := []string{header(title, m.st.Subtle.Render(right), m.w), m.progressLine()}
	bottom := m.footer(m.keys, "the view adds none; it reads the load engine's own counters, and the level is the last decision's")
	return screen(m.w, m.h, top, bottom, func(h int) string { return m.body(m.w, h) })
}

func (m Load) progressLine() string {
	s := m.snap
	what := "starting…"
	if m.has {
		what = format.Duration(s.Elapsed) + " of " + format.Duration(s.Duration)
		if s.Requests > 0 {
			what = format.GroupDigits(s.Decisions) + " of " + format.GroupDigits(s.Requests) + " requests · " + format.Duration(s.Elapsed)
		}
	}
	p := s.Progress()
	text := fmt.Sprintf(" %4s · %s", format.Percent(p), what)
	m.bar.Width = max(10, m.w-lipgloss.Width(text))
	return m.bar.ViewAs(p) + m.st.Subtle.Render(text)
}

const sidePanelW = 24 // the latency and level panel beside the chart

func (m Load) body(w, h int) string {
	if !m.has {
		return m.st.Subtle.Render("waiting for the first snapshot…")
	}
	lines, chartW := []string{m.countsLine(), m.lastSecondLine()}, w
	wide := w >= 64
	if wide {
		chartW = w - sidePanelW - 2
	} else {
		lines = append(lines, m.latencyLine(), m.tokensLine(w))
	}
	lines = append(lines, "")
	room, chart := h-len(lines), ""
	if room >= 6 {
		chart = ratesChart(m.st, m.snap, chartW, room-1)
	}
	if chart == "" && room >= 1 {
		chart = m.st.Subtle.Render("the chart starts after the first second")
	}
	chart = m.st.Subtle.Render("─ allowed/s  ") + m.st.Bad.Render("⣿") + m.st.Subtle.Render(" denied/s  (log scale)") + "\n" + chart
	if wide {
		chart = lipgloss.JoinHorizontal(lipgloss.Top, m.st.r.NewStyle().Width(chartW+2).Render(chart), m.sidePanel())
	}
	return strings.Join(lines, "\n") + "\n" + chart
}

func countItems(st Styles, allowed, denied, errs, retries int64) []string {
	errSty := st.Value
	if errs > 0 {
		errSty = st.Bad
	}
	items := []string{st.kv("allowed", st.Good.Render(format.GroupDigits(allowed))),
		st.kv("denied", st.Value.Render(format.GroupDigits(denied))), st.kv("errors", errSty.Render(format.GroupDigits(errs)))}
	if retries > 0 {
		items = append(items, st.kv("retries", st.Warn.Render(format.GroupDigits(retries))))
	}
	return items
}

func (m Load) countsLine() string {
	s, st := m.snap, m.st
	parts := countItems(st, s.Allowed, s.Denied, s.Errors, s.Retries)
	if s.Elapsed > 0 {
		ops := float64(s.Allowed+s.Denied) / s.Elapsed.Seconds()
		parts = append(parts, st.Value.Render(format.PerSecond(ops))+st.Label.Render(" ops/s"))
	}
	return strings.Join(parts, st.Subtle.Render(" · "))
}

func (m Load) lastSecondLine() string {
	s := m.snap
	n := completeSeconds(s)
	if n == 0 {
		return m.st.Subtle.Render("last second: collecting…")
	}
	p := s.PerSecond[n-1]
	return m.st.Label.Render("last second: allowed ") + m.st.Good.Render(format.Rate(float64(p.Allowed))) +
		m.st.Label.Render(" · denied ") + m.st.Bad.Render(format.Rate(float64(p.Denied))) +
		m.st.Subtle.Render(fmt.Sprintf(" · bucket refills %s", format.Rate(s.Spec.Rate)))
}

func (m Load) latencyLine() string {
	l := m.snap.Latency
	return m.st.kv("latency", "") + fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s",
		format.Latency(l.P50), format.Latency(l.P90), format.Latency(l.P99), format.Latency(l.Max))
}

func (m Load) tokensLine(w int) string {
	s := m.snap
	if !s.HasTokens {
		return m.st.kv("tokens", m.st.Subtle.Render("–"))
	}
	text := m.st.kv("tokens", m.st.Value.Render(format.Tokens(s.Tokens))+m.st.Subtle.Render(" / "+format.Tokens(s.Spec.Capacity))+" ")
	return text + m.st.Bar(max(0, min(30, w-lipgloss.Width(text))), s.Tokens/s.Spec.Capacity)
}

func (m Load) sidePanel() string {
	s, st := m.snap, m.st
	row := func(label string, v float64) string {
		return "  " + st.Label.Render(fmt.Sprintf("%-7s", label)) + padLeft(format.Latency(v), 8)
	}
	l := s.Latency
	lines := []string{st.Header.Render("latency so far"),
		row("p50", l.P50), row("p90", l.P90), row("p99", l.P99), row("p99.9", l.P999), row("max", l.Max),
		"", st.Header.Render("bucket level")}
	if s.HasTokens {
		lines = append(lines,
			"  "+st.Value.Render(format.Tokens(s.Tokens))+st.Subtle.Render(" / "+format.Tokens(s.Spec.Capacity)+" tokens"),
			"  "+st.Bar(sidePanelW-4, s.Tokens/s.Spec.Capacity))
	} else {
		lines = append(lines, "  "+st.Subtle.Render("no decision yet"))
	}
	if s.Decisions > 0 {
		lines = append(lines, "", st.kv("  calls/request", st.Value.Render(format.Fixed(float64(s.Calls)/float64(s.Decisions), 2))))
	}
	return strings.Join(lines, "\n")
}

func completeSeconds(s load.Snapshot) int {
	n := int(s.Elapsed / time.Second)
	if !s.Running {
		n = len(s.PerSecond)
	}
	return min(n, len(s.PerSecond))
}

// Done reports whether the view saw the run end (a LoadDoneMsg), not a quit before it.
func (m Load) Done() bool { return m.done }

// Width is the terminal's width as the view last knew it (80 until told).
func (m Load) Width() int { return m.w }
