package tui

import (
	"context"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/bucketctl/bucketctl/bucket"
)

// TopSource reads every matching bucket and resets one. Fetch is called again only after
// the previous call returned.
type TopSource interface {
	Fetch(ctx context.Context) (TopSnapshot, error)
	// Reset refills the bucket (it is read as full afterwards), in its own layout.
	Reset(ctx context.Context, st bucket.State) error
}

// TopSnapshot is one refresh of the dashboard.
type TopSnapshot struct {
	// States are the matching buckets, in any order.
	States []bucket.State
	// Cost is what the refresh cost Redis, as the source measured it.
	Cost Cost
	// Took is how long the refresh took.
	Took time.Duration
}

// Cost is the Redis cost of one refresh.
type Cost struct {
	Commands, RoundTrips int
	// Detail says what the round trips were ("3 SCAN pages, 2 inspect pipelines").
	Detail string
}

func (c Cost) String() string {
	s := Plural(c.RoundTrips, "round trip") + ", " + Plural(c.Commands, "command")
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// TopOptions configure the dashboard. The level chart of the detail pane keeps Window
// of history.
type TopOptions struct {
	// Match is the SCAN pattern, shown in the header.
	Match string
	// CostOf gives the cost the detail pane's retry-after assumes for a key (nil: Cost).
	CostOf func(key string) float64
	LiveOptions
}

// SortBy is the dashboard's row order.
type SortBy int

const (
	// SortFill puts the emptiest buckets (closest to denying) first.
	SortFill SortBy = iota
	// SortDeny puts the buckets denying most per second first.
	SortDeny
	// SortName orders by key.
	SortName
	sortModes
)

func (s SortBy) String() string {
	return [...]string{"fill ↑", "deny/s ↓", "name"}[s]
}

type topRow struct {
	state  bucket.State
	act    bucket.Activity
	hasAct bool
	// prev is the bucket in the snapshot before (hasPrev), for the detail pane's start.
	prev    bucket.State
	hasPrev bool
}

func (r *topRow) denyRate() float64 {
	if !r.hasAct || !r.act.Counted {
		return -1
	}
	return r.act.Denied
}

// Top is the dashboard of many buckets, refreshed in the background.
type Top struct {
	live
	src  TopSource
	opts TopOptions
	keys topKeys

	rows    []topRow
	visible []int // indices into rows, filtered and sorted
	sortBy  SortBy
	sel     string // selected key, kept across refreshes
	cursor  int
	offset  int

	filter    lineInput
	filtering bool

	detail     bool
	detailView bucketView
	detailGone bool

	confirm *bucket.State
	notice  string
	noticeE bool
	again   bool // refresh once more when the read in flight returns (a reset happened)

	snap     TopSnapshot
	haveSnap bool
}

// NewTop returns the dashboard reading from src.
func NewTop(src TopSource, opts TopOptions) Top {
	l := newLive(&opts.LiveOptions)
	return Top{
		live: l, src: src, opts: opts,
		keys:       newTopKeys(),
		filter:     lineInput{prompt: "/", placeholder: "part of the key"},
		detailView: newBucketView(l.st, opts.Cost, opts.Window),
	}
}

type topTickMsg struct{}

type topReadMsg struct {
	snap TopSnapshot
	err  error
}

type topResetMsg struct {
	key string
	err error
}

// Init starts the first refresh and the ticker.
func (m Top) Init() tea.Cmd { return tea.Batch(m.fetch(), m.poll.tick(topTickMsg{})) }

func (m *Top) fetch() tea.Cmd {
	src := m.src
	return m.poll.fetch(func(ctx context.Context) tea.Msg {
		s, err := src.Fetch(ctx)
		return topReadMsg{snap: s, err: err}
	})
}

// Update handles keys, resizes, ticks, refreshes and resets.
func (m Top) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
		m.scroll()
	case tea.KeyMsg:
		return m.key(msg)
	case topTickMsg:
		return m, tea.Batch(m.poll.tick(msg), m.fetch())
	case topReadMsg:
		m.poll.finish(msg.err)
		if msg.err == nil {
			m.apply(msg.snap)
		}
		if m.again {
			m.again = false
			return m, m.fetch()
		}
	case topResetMsg:
		if msg.err != nil {
			m.notice, m.noticeE = "reset "+msg.key+" failed: "+oneLine(msg.err.Error()), true
			return m, nil
		}
		m.notice, m.noticeE = "reset "+msg.key+": it reads as full now", false
		if cmd := m.fetch(); cmd != nil {
			return m, cmd
		}
		m.again = true
	}
	return m, nil
}

// apply takes a new snapshot: rates from the previous one, then order and selection.
func (m *Top) apply(s TopSnapshot) {
	prev := make(map[string]*bucket.State, len(m.rows))
	for i := range m.rows {
		prev[m.rows[i].state.Key] = &m.rows[i].state
	}
	rows := make([]topRow, len(s.States))
	m.detailGone = m.detail
	for i, st := range s.States {
		rows[i].state = st
		if p, ok := prev[st.Key]; ok {
			rows[i].prev, rows[i].hasPrev = *p, true
			rows[i].act, rows[i].hasAct = bucket.ActivityBetween(*p, st)
		}
		if m.detail && st.Key == m.detailView.cur.Key {
			m.detailView.observe(st)
			m.detailGone = false
		}
	}
	m.rows, m.snap, m.haveSnap = rows, s, true
	m.refilter()
}

func (m *Top) setSort(s SortBy) {
	m.sortBy = s
	m.refilter()
}

// refilter recomputes the visible rows (filter, then sort) and keeps the selected key
// selected when it is still there.
func (m *Top) refilter() {
	f := strings.ToLower(m.filter.Value())
	m.visible = m.visible[:0]
	for i := range m.rows {
		if f == "" || strings.Contains(strings.ToLower(m.rows[i].state.Key), f) {
			m.visible = append(m.visible, i)
		}
	}
	sort.SliceStable(m.visible, func(a, b int) bool {
		return m.less(&m.rows[m.visible[a]], &m.rows[m.visible[b]])
	})
	m.cursor = min(m.cursor, max(0, len(m.visible)-1))
	for i, idx := range m.visible {
		if m.rows[idx].state.Key == m.sel {
			m.cursor = i
			break
		}
	}
	m.remember()
	m.scroll()
}

func (m *Top) less(a, b *topRow) bool {
	// Unreadable buckets and buckets of unknown spec have no fill: they go last.
	ua, ub := a.state.Problem != "" || !a.state.HasSpec(), b.state.Problem != "" || !b.state.HasSpec()
	switch m.sortBy {
	case SortFill:
		if ua != ub {
			return ub
		}
		if fa, fb := a.state.Fill(), b.state.Fill(); fa != fb {
			return fa < fb
		}
	case SortDeny:
		if da, db := a.denyRate(), b.denyRate(); da != db {
			return da > db
		}
		if ua != ub {
			return ub
		}
		if fa, fb := a.state.Fill(), b.state.Fill(); fa != fb {
			return fa < fb
		}
	}
	return a.state.Key < b.state.Key
}

func (m *Top) move(d int) {
	m.cursor = max(0, min(len(m.visible)-1, m.cursor+d))
	m.remember()
	m.scroll()
}

func (m *Top) remember() {
	if r := m.selected(); r != nil {
		m.sel = r.state.Key
	}
}

func (m *Top) selected() *topRow {
	if m.cursor < 0 || m.cursor >= len(m.visible) {
		return nil
	}
	return &m.rows[m.visible[m.cursor]]
}

// scroll keeps the cursor in the window of rows shown.
func (m *Top) scroll() {
	n := m.tableRows()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+n {
		m.offset = m.cursor - n + 1
	}
	m.offset = max(0, min(m.offset, len(m.visible)-n))
}

// Layout of the screen: header, status line, blank, table header, rows, "more" line,
// help. tableRows is how many bucket rows fit.
func (m *Top) tableRows() int {
	return max(1, m.h-m.chromeHeight()-2)
}

func (m *Top) chromeHeight() int {
	return lineCount(m.topLines()) + 1 + lineCount(m.bottomLines())
}
