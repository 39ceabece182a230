package tui

import (
	"cmp"
	"context"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// TopSource reads every matching bucket (one Fetch at a time) and resets one to full.
type TopSource interface {
	Fetch(ctx context.Context) (TopSnapshot, error)
	Reset(ctx context.Context, st bucket.State) error
}

// TopSnapshot is one refresh of the dashboard.
type TopSnapshot struct {
	States   []bucket.State // the matching buckets, in any order
	Cost     Cost           // what the refresh cost Redis, as the source measured it
	Took     time.Duration
	Coverage string // how much of the keyspace was read ("scanned 340k of ~1.3M keys")
	Keyspace int64  // about how many keys there are
	// Hot are writes per second by key; HotNote says why they are unavailable.
	Hot                map[string]float64
	HotSource, HotNote string
}

// Cost is the Redis cost of one refresh.
type Cost struct {
	Commands, RoundTrips int
	Detail               string // "3 SCAN pages, 2 pipelines"
}

func (c Cost) String() string {
	s := format.Plural(c.RoundTrips, "round trip") + ", " + format.Plural(c.Commands, "command")
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// TopOptions configure the dashboard.
type TopOptions struct {
	Match     string                   // the SCAN pattern, shown in the header
	CostOf    func(key string) float64 // the detail pane's request cost (nil: Cost)
	Sort      SortBy                   // the order the dashboard opens in
	Hint      string                   // a line under the header
	NoticeFor time.Duration            // how long a status message stays (default 4 s)
	LiveOptions
}

type topRow struct {
	state         bucket.State
	act           bucket.Activity
	hasAct        bool
	prev          bucket.State // the read before (hasPrev), for the detail pane's start
	hasPrev, gone bool         // gone: kept on screen under the cursor after leaving the scan
	hot           float64      // writes seen per second now
	order         steadyOrder
}

// Top is the dashboard of many buckets, refreshed in the background.
type Top struct {
	live
	src  TopSource
	opts TopOptions
	keys topKeys

	rows               []topRow
	visible            []int // indices into rows, filtered and sorted
	sortBy             SortBy
	reverse            bool
	sel                string // the key under the cursor; the first row until pinned
	pinned             bool
	cursor, offset     int
	keyWant            int // the widest visible key, in cells
	filter             string
	filtering          bool
	detail, detailGone bool
	detailView         bucketView
	confirm            *bucket.State
	again              bool   // refresh again when the read in flight returns
	notice             string // styled
	noticeID           int
	paused             bool
	pending            *TopSnapshot // a read that came back while paused
	snap               TopSnapshot
	haveSnap           bool
}

// NewTop returns the dashboard reading from src.
func NewTop(src TopSource, opts TopOptions) Top {
	opts.NoticeFor = cmp.Or(opts.NoticeFor, 4*time.Second)
	l := newLive(&opts.LiveOptions)
	return Top{
		live: l, src: src, opts: opts, sortBy: opts.Sort,
		keys:       newTopKeys(),
		detailView: newBucketView(l.st, opts.Cost, opts.Window),
	}
}

type topResetMsg struct {
	key string
	err error
}

type noticeExpiredMsg struct{ id int }

// Init starts the first read and the ticker.
func (m Top) Init() tea.Cmd { return tea.Batch(m.fetch(), tick(m.Interval)) }

// TopKeeper is a TopSource over part of a large keyspace that keeps the bucket under the
// cursor ("" none) in its snapshots while it exists.
type TopKeeper interface{ Keep(key string) }

func (m *Top) fetch() tea.Cmd {
	src, keep := m.src, ""
	if m.pinned {
		keep = m.sel
	}
	return fetch(&m.live, func(ctx context.Context) (TopSnapshot, error) {
		if k, ok := src.(TopKeeper); ok {
			k.Keep(keep)
		}
		return src.Fetch(ctx)
	})
}

func (m *Top) say(text string, sty lipgloss.Style) tea.Cmd {
	m.noticeID++
	m.notice = sty.Render(text)
	id := m.noticeID
	return tea.Tick(m.opts.NoticeFor, func(time.Time) tea.Msg { return noticeExpiredMsg{id} })
}

// Update handles keys, resizes, ticks, reads and resets.
func (m Top) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
		m.scroll()
	case tea.KeyMsg:
		return eachKey(m, msg, func(m Top) bool { return m.filtering }, func(m Top) bool { return m.confirm != nil }, Top.onKey)
	case tickMsg:
		m.ticked()
		if m.paused {
			return m, tick(m.Interval)
		}
		return m, tea.Batch(tick(m.Interval), m.fetch())
	case readMsg[TopSnapshot]:
		m.finish(msg.err)
		switch {
		case msg.err != nil:
		case m.paused:
			m.pending = &msg.v
		default:
			m.apply(msg.v)
		}
		if m.again && !m.paused {
			m.again = false
			return m, m.fetch()
		}
	case topResetMsg:
		if msg.err != nil {
			return m, m.say("reset "+format.SafeKey(msg.key)+" failed: "+m.errText(msg.err), m.st.Bad)
		}
		say := m.say("reset "+format.SafeKey(msg.key)+": it reads as full now", m.st.Good)
		if m.paused {
			return m, say
		}
		read := m.fetch()
		m.again = read == nil // a read is in flight: read again when it returns
		return m, tea.Batch(say, read)
	case noticeExpiredMsg:
		if msg.id == m.noticeID {
			m.notice = ""
		}
	}
	return m, nil
}

// setPaused freezes or resumes the rows; resuming shows the read that waited, reads again.
func (m *Top) setPaused(p bool) tea.Cmd {
	m.paused = p
	if p {
		return nil
	}
	if m.pending != nil {
		m.apply(*m.pending)
		m.pending = nil
	}
	m.again = false
	return m.fetch()
}

// apply takes a new snapshot: rates from the previous one, then order and selection.
func (m *Top) apply(s TopSnapshot) {
	prev := make(map[string]*topRow, len(m.rows))
	for i := range m.rows {
		prev[m.rows[i].state.Key] = &m.rows[i]
	}
	rows := make([]topRow, len(s.States), len(s.States)+1)
	m.detailGone = m.detail
	selHere := false
	for i, st := range s.States {
		rows[i].state, rows[i].hot = st, s.Hot[st.Key]
		var was *steadyOrder
		if p, ok := prev[st.Key]; ok && !p.gone {
			rows[i].prev, rows[i].hasPrev = p.state, true
			rows[i].act, rows[i].hasAct = st.ActivitySince(p.state)
			was = &p.order
		}
		rows[i].order = rows[i].steadied(was)
		if m.detail && st.Key == m.detailView.cur.Key {
			m.detailView.observe(st)
			m.detailGone = false
		}
		selHere = selHere || st.Key == m.sel
	}
	// The selected bucket stays, marked gone, so the cursor does not jump to a neighbour.
	if p, ok := prev[m.sel]; ok && m.pinned && !selHere {
		rows = append(rows, topRow{state: p.state, gone: true})
	}
	m.rows, m.snap, m.haveSnap = rows, s, true
	m.refilter()
}

// refilter filters and sorts the rows, and puts the cursor back on its bucket (or the first
// row while the user has not moved it).
func (m *Top) refilter() {
	f := strings.ToLower(m.filter)
	m.visible = m.visible[:0]
	m.keyWant = 0
	for i := range m.rows {
		if f == "" || strings.Contains(strings.ToLower(m.rows[i].state.Key), f) {
			m.visible = append(m.visible, i)
			m.keyWant = max(m.keyWant, ansi.StringWidth(format.SafeKey(m.rows[i].state.Key)))
		}
	}
	sort.SliceStable(m.visible, func(a, b int) bool { return m.less(&m.rows[m.visible[a]], &m.rows[m.visible[b]]) })
	if !m.pinned {
		m.cursor, m.offset = 0, 0
	} else {
		m.cursor = min(m.cursor, max(0, len(m.visible)-1))
		for i, idx := range m.visible {
			if m.rows[idx].state.Key == m.sel {
				m.cursor = i
				break
			}
		}
	}
	m.remember()
	m.scroll()
}

func (m *Top) move(d int) {
	m.cursor = max(0, min(len(m.visible)-1, m.cursor+d))
	m.pinned = true
	m.remember()
	m.scroll()
}

// home puts the cursor back on the first row, following the top of the order again.
func (m *Top) home() {
	m.pinned = false
	m.cursor, m.offset = 0, 0
	m.remember()
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

func (m *Top) scroll() {
	n := m.tableRows()
	m.offset = max(min(m.offset, m.cursor), m.cursor-n+1) // the cursor in view
	m.offset = max(0, min(m.offset, len(m.visible)-n))
}

// tableRows is how many bucket rows fit under the chrome and the table's header.
func (m *Top) tableRows() int {
	return max(1, m.h-len(splitAll(m.topLines()))-1-len(splitAll(m.bottomLines()))-2)
}
