package tui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

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

// Plural writes n (with thousands separators) and what, with an s unless n is 1.
func Plural(n int, what string) string {
	s := groupDigits(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

// groupDigits writes n with thousands separators: 10,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
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

type topKeys struct {
	GlobalKeys
	Up, Down, PageUp, PageDown, Home, End key.Binding
	Detail, Back, Filter, Sort            key.Binding
	SortFill, SortDeny, SortName          key.Binding
	Reset, Refresh                        key.Binding
}

func newTopKeys() topKeys {
	b := func(help string, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return topKeys{
		GlobalKeys: NewGlobalKeys(),
		Up:         b("↑/k", "up", "up", "k"),
		Down:       b("↓/j", "down", "down", "j"),
		PageUp:     b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown:   b("pgdn", "page down", "pgdown", "ctrl+f", " "),
		Home:       b("g", "first", "home", "g"),
		End:        b("G", "last", "end", "G"),
		Detail:     b("enter", "detail", "enter"),
		Back:       b("esc", "back", "esc"),
		Filter:     b("/", "filter", "/"),
		Sort:       b("s", "sort", "s"),
		SortFill:   b("1", "by fill", "1"),
		SortDeny:   b("2", "by deny/s", "2"),
		SortName:   b("3", "by name", "3"),
		Reset:      b("r", "reset", "r"),
		Refresh:    b("ctrl+r", "refresh now", "ctrl+r"),
	}
}

func (k topKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.Up, k.Down, k.Detail, k.Filter, k.Sort, k.Reset}, k.bindings()...)
}

func (k topKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Detail, k.Back, k.Filter, k.Reset, k.Refresh},
		{k.Sort, k.SortFill, k.SortDeny, k.SortName},
		k.bindings(),
	}
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

func (m Top) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	m.notice, m.noticeE = "", false // a notice stays until the next key
	if m.confirm != nil {
		switch msg.String() {
		case "y", "Y":
			st := *m.confirm
			m.confirm = nil
			src, ctx := m.src, m.poll.parent
			timeout := m.opts.Timeout
			return m, func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				return topResetMsg{key: st.Key, err: src.Reset(ctx, st)}
			}
		case "n", "N", "esc", "q":
			m.confirm = nil
			m.notice, m.noticeE = "reset cancelled", false
		case "ctrl+c":
			m.poll.stop()
			return m, tea.Quit
		}
		return m, nil
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			return m, nil
		case "esc":
			m.filtering = false
			m.filter.SetValue("")
			m.refilter()
			return m, nil
		case "ctrl+c":
			m.poll.stop()
			return m, tea.Quit
		}
		if m.filter.update(msg) {
			m.refilter()
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.poll.stop()
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, k.Back):
		if m.detail {
			m.detail = false
		} else if m.filter.Value() != "" {
			m.filter.SetValue("")
			m.refilter()
		}
	case key.Matches(msg, k.Refresh):
		return m, m.fetch()
	case key.Matches(msg, k.Reset):
		switch r := m.selected(); {
		case m.detail && m.detailGone:
			m.notice, m.noticeE = m.detailView.cur.Key+" is gone already: it reads as full", false
		case m.detail:
			st := m.detailView.cur
			m.confirm = &st
		case r != nil:
			st := r.state
			m.confirm = &st
		}
	case m.detail:
		if key.Matches(msg, k.Detail) {
			m.detail = false
		}
	case key.Matches(msg, k.Detail):
		if r := m.selected(); r != nil {
			m.detail, m.detailGone = true, false
			cost := m.opts.Cost
			if m.opts.CostOf != nil {
				cost = m.opts.CostOf(r.state.Key)
			}
			m.detailView = newBucketView(m.st, cost, m.opts.Window)
			if r.hasPrev {
				m.detailView.observe(r.prev)
			}
			m.detailView.observe(r.state)
		}
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.Sort):
		m.setSort((m.sortBy + 1) % sortModes)
	case key.Matches(msg, k.SortFill):
		m.setSort(SortFill)
	case key.Matches(msg, k.SortDeny):
		m.setSort(SortDeny)
	case key.Matches(msg, k.SortName):
		m.setSort(SortName)
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-m.tableRows())
	case key.Matches(msg, k.PageDown):
		m.move(m.tableRows())
	case key.Matches(msg, k.Home):
		m.move(-len(m.visible))
	case key.Matches(msg, k.End):
		m.move(len(m.visible))
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

// View renders the screen.
func (m Top) View() string {
	top, bottom := m.topLines(), m.bottomLines()
	bodyH := m.h - lineCount(top) - 1 - lineCount(bottom)
	var body string
	switch {
	case m.confirm != nil:
		body = m.dialog(bodyH)
	case m.detail:
		body = m.detailBody(bodyH)
	case !m.haveSnap && m.poll.err == nil:
		body = m.st.Subtle.Render("scanning…")
	default:
		body = m.table(max(1, bodyH-2)) // as tableRows, without rendering the chrome again
	}
	return screen(m.w, m.h, top, body, bottom)
}

func (m *Top) topLines() []string {
	title := m.st.Title.Render("bucketctl top")
	if m.opts.Match != "" {
		title += " " + m.st.Label.Render("match ") + m.st.Value.Render(m.opts.Match)
	}
	count := ""
	if m.haveSnap {
		count = Plural(len(m.snap.States), "bucket") + " · "
	}
	lines := m.headerLines(title, count, &m.opts.LiveOptions, m.haveSnap)
	var status []string
	if m.haveSnap && m.snap.Took > m.opts.Interval {
		status = append(status, m.st.Warn.Render("⚠ refresh took "+FormatDuration(m.snap.Took)+
			" (interval "+FormatDuration(m.opts.Interval)+"): refreshing as fast as Redis answers"))
	}
	if m.notice != "" {
		sty := m.st.Good
		if m.noticeE {
			sty = m.st.Bad
		}
		status = append(status, sty.Render(m.notice))
	}
	if len(status) > 0 {
		lines = append(lines, trunc(strings.Join(status, "  "), m.w))
	}
	return lines
}

func (m *Top) bottomLines() []string {
	if m.filtering {
		return []string{m.filter.view(m.st, m.w), m.help.ShortHelpView([]key.Binding{
			key.NewBinding(key.WithHelp("enter", "keep filter")),
			key.NewBinding(key.WithHelp("esc", "clear")),
		})}
	}
	if !m.showHelp {
		return []string{m.help.ShortHelpView(m.keys.ShortHelp())}
	}
	lines := strings.Split(m.help.FullHelpView(m.keys.FullHelp()), "\n")
	cost := "Redis cost per refresh: not measured yet"
	if m.haveSnap {
		cost = "Redis cost per refresh: " + m.snap.Cost.String() + ", took " + FormatDuration(m.snap.Took) +
			", every " + FormatDuration(m.opts.Interval)
	}
	lines = append(lines, "")
	wrap := m.st.Subtle.Width(m.w)
	for _, p := range []string{cost, "Reads only: SCAN on every master, then the buckets' TYPE, PTTL and fields in pipelines; a reset writes one bucket, after y."} {
		lines = append(lines, strings.Split(wrap.Render(p), "\n")...)
	}
	return lines
}

// column is one column of the table. The key column takes the width left over.
type column struct {
	title string
	width int
	prio  int // lower is kept longer when the terminal narrows
	cell  func(m *Top, r *topRow, w int) string
}

const (
	gutter = 2  // the selection marker
	keyMin = 20 // the key column's least width (less on very narrow terminals)
	barMax = 30
)

var topColumns = []column{
	{"FILL", 10, 1, func(m *Top, r *topRow, w int) string { return m.st.Bar(w, r.state.Fill()) }},
	{"TOKENS", 8, 2, func(m *Top, r *topRow, w int) string { return padLeft(FormatTokens(r.state.Tokens), w) }},
	{"CAP", 7, 4, func(m *Top, r *topRow, w int) string { return padLeft(FormatTokens(r.state.Spec.Capacity), w) }},
	{"RATE", 8, 5, func(m *Top, r *topRow, w int) string { return padLeft(FormatRate(r.state.Spec.Rate), w) }},
	{"ALLOW/s", 8, 7, func(m *Top, r *topRow, w int) string {
		return padLeft(rateCell(r.hasAct && r.act.Counted, r.act.Allowed), w)
	}},
	{"DENY/s", 8, 3, func(m *Top, r *topRow, w int) string {
		s := padLeft(rateCell(r.hasAct && r.act.Counted, r.act.Denied), w)
		if r.hasAct && r.act.Denied > 0 {
			return m.st.Bad.Render(s)
		}
		return s
	}},
	{"USE/s", 8, 8, func(m *Top, r *topRow, w int) string {
		return padLeft(rateCell(r.hasAct && r.act.ConsumedKnown, r.act.Consumed), w)
	}},
	{"TTL", 7, 6, func(m *Top, r *topRow, w int) string { return padLeft(FormatTTL(r.state.TTL), w) }},
	{"UPDATED", 8, 9, func(m *Top, r *topRow, w int) string {
		if !r.state.Exists {
			return padLeft("never", w)
		}
		return padLeft(FormatDuration(r.state.Age()), w)
	}},
	{"LAYOUT", 10, 10, func(m *Top, r *topRow, w int) string { return trunc(r.state.Layout.Name, w) }},
}

func rateCell(known bool, v float64) string {
	if !known {
		return "–"
	}
	return FormatTokens(v)
}

// columns picks the columns that fit in width w, in display order, with their widths, and
// the key column's width.
func columns(w int) (cols []column, keyW int) {
	avail := w - gutter
	kmin := min(keyMin, max(8, avail/2))
	byPrio := make([]column, len(topColumns))
	copy(byPrio, topColumns)
	sort.SliceStable(byPrio, func(i, j int) bool { return byPrio[i].prio < byPrio[j].prio })
	used := kmin
	keep := map[string]bool{}
	for _, c := range byPrio {
		if used+1+c.width > avail {
			break
		}
		used += 1 + c.width
		keep[c.title] = true
	}
	extra := avail - used
	for _, c := range topColumns {
		if !keep[c.title] {
			continue
		}
		if c.title == "FILL" {
			grow := min(extra/2, barMax-c.width)
			c.width += grow
			extra -= grow
		}
		cols = append(cols, c)
	}
	return cols, kmin + extra
}

// table renders the table header and n rows.
func (m *Top) table(n int) string {
	cols, keyW := columns(m.w)
	var b strings.Builder
	hdr := strings.Repeat(" ", gutter) + fit("KEY", keyW)
	for _, c := range cols {
		t := c.title
		if c.title != "FILL" && c.title != "LAYOUT" {
			t = padLeft(t, c.width)
		} else {
			t = fit(t, c.width)
		}
		hdr += " " + t
	}
	b.WriteString(m.st.Header.Render(hdr))
	end := min(len(m.visible), m.offset+n)
	stale := m.poll.err != nil
	for i := m.offset; i < end; i++ {
		r := &m.rows[m.visible[i]]
		b.WriteString("\n")
		b.WriteString(m.row(r, i == m.cursor, cols, keyW, stale))
	}
	if len(m.visible) == 0 {
		b.WriteString("\n" + m.st.Subtle.Render(m.emptyText()))
	}
	b.WriteString("\n" + m.st.Subtle.Render(trunc(m.moreText(end), m.w)))
	return b.String()
}

func (m *Top) emptyText() string {
	switch {
	case m.filter.Value() != "":
		return "no bucket key contains " + strconv.Quote(m.filter.Value()) + " (esc clears the filter)"
	case m.opts.Match != "":
		return "no key matches " + strconv.Quote(m.opts.Match)
	}
	return "no keys"
}

// moreText counts what the table does not show: the hottest rows are on screen, the rest
// is summed up here.
func (m *Top) moreText(end int) string {
	var parts []string
	if len(m.visible) > 0 {
		parts = append(parts, fmt.Sprintf("%s–%s of %s", groupDigits(m.offset+1), groupDigits(end), groupDigits(len(m.visible))))
	}
	if rest := len(m.visible) - end; rest > 0 {
		parts = append(parts, "+"+groupDigits(rest)+" more below")
	}
	if f := m.filter.Value(); f != "" {
		parts = append(parts, "filter "+strconv.Quote(f)+" ("+groupDigits(len(m.rows)-len(m.visible))+" hidden)")
	}
	parts = append(parts, "sort "+m.sortBy.String())
	return strings.Join(parts, " · ")
}

func (m *Top) row(r *topRow, selected bool, cols []column, keyW int, stale bool) string {
	mark := "  "
	if selected {
		mark = "▸ "
	}
	keyCell := fit(r.state.Key, keyW)
	var line string
	if r.state.Problem != "" || !r.state.HasSpec() {
		msg := r.state.Problem
		if msg == "" {
			msg = fmt.Sprintf("%s tokens (%s layout; capacity and rate unknown: add a rule)", FormatTokens(r.state.Tokens), r.state.Layout.Name)
		}
		rest := m.w - gutter - keyW - 1
		sty := m.st.Subtle
		if r.state.Problem != "" {
			sty = m.st.Bad
		}
		line = keyCell + " " + sty.Render(trunc(msg, rest))
	} else {
		var b strings.Builder
		b.WriteString(keyCell)
		for _, c := range cols {
			b.WriteString(" ")
			b.WriteString(c.cell(m, r, c.width))
		}
		line = b.String()
	}
	switch {
	case selected:
		// Reverse video shows the selection in colour; the marker shows it without.
		return mark + m.st.Selected.Render(ansi.Strip(line))
	case stale:
		return mark + m.st.Stale.Render(ansi.Strip(line))
	}
	return mark + line
}

func (m *Top) detailBody(h int) string {
	title := m.st.Label.Render("detail ") + m.st.Value.Render(m.detailView.cur.Key) +
		m.st.Subtle.Render("  (esc back · r reset)")
	lines := []string{trunc(title, m.w)}
	if m.detailGone {
		lines = append(lines, m.st.Notice.Render(trunc("not in the last scan: the bucket expired or was deleted (it reads as full)", m.w)))
	}
	body := m.detailView.view(m.w, h-len(lines)-1, m.poll.err != nil || m.detailGone)
	return strings.Join(lines, "\n") + "\n\n" + body
}

func (m *Top) dialog(h int) string {
	s := m.confirm
	what := s.Layout.Name + " bucket"
	if s.HasSpec() {
		what += " · " + FormatTokens(s.Tokens) + " / " + FormatTokens(s.Spec.Capacity) + " tokens"
	}
	text := strings.Join([]string{
		m.st.Bad.Render("Reset " + s.Key + "?"),
		"",
		what,
		"It will read as full: this writes to Redis.",
		"",
		m.st.Title.Render("y") + " reset   " + m.st.Title.Render("n") + " cancel",
	}, "\n")
	box := m.st.Dialog.Width(min(60, m.w-4)).Render(text)
	return lipgloss.PlaceHorizontal(m.w, lipgloss.Center, box) + strings.Repeat("\n", max(0, h-lipgloss.Height(box)-1))
}
