package tui

import (
	"context"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/bucketctl/bucketctl/bucket"
)

// WatchSource reads the watched bucket once. bucket.Store.Inspect of one key is one
// pipelined round trip.
type WatchSource func(ctx context.Context) (bucket.State, error)

// LiveOptions are what every polling screen takes. Zero values take the defaults.
type LiveOptions struct {
	// Addr is the Redis address, named in the banner when a read fails.
	Addr string
	// Interval is the time between reads (default 1 s); Timeout bounds one read
	// (default 5 s or three intervals, whichever is longer).
	Interval, Timeout time.Duration
	// Window is how much history a level chart shows (default 5 min).
	Window time.Duration
	// Cost is the request cost retry-after assumes (default 1).
	Cost float64
	// Styles default to NewStyles(nil): the terminal's colours, NO_COLOR honoured.
	Styles *Styles
	// Now is the clock of the refresh time shown (default time.Now); tests pin it.
	Now func() time.Time
}

func (o *LiveOptions) defaults() {
	o.Interval, o.Timeout = intervals(o.Interval, o.Timeout)
	if o.Styles == nil {
		s := NewStyles(nil)
		o.Styles = &s
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// WatchOptions configure the watch screen.
type WatchOptions struct {
	// Key is the watched key, shown before the first read arrives.
	Key string
	LiveOptions
}

// intervals fills in the default refresh interval and fetch timeout.
func intervals(interval, timeout time.Duration) (time.Duration, time.Duration) {
	if interval <= 0 {
		interval = time.Second
	}
	if timeout <= 0 {
		timeout = FetchTimeout(interval)
	}
	return interval, timeout
}

// FetchTimeout is the default bound of one read at a refresh interval: 5 s or three
// intervals, whichever is longer.
func FetchTimeout(interval time.Duration) time.Duration { return max(5*time.Second, 3*interval) }

type watchKeys struct {
	GlobalKeys
	Refresh key.Binding
}

func (k watchKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.Refresh}, k.bindings()...)
}
func (k watchKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Refresh}, k.bindings()}
}

// Watch is the live view of one bucket: gauge, rates, timings and level chart, polled
// every interval with one read in flight at most.
type Watch struct {
	live
	src  WatchSource
	opts WatchOptions
	keys watchKeys
	body bucketView
}

// NewWatch returns the watch screen reading from src.
func NewWatch(src WatchSource, opts WatchOptions) Watch {
	l := newLive(&opts.LiveOptions)
	return Watch{
		live: l, src: src, opts: opts,
		keys: watchKeys{GlobalKeys: NewGlobalKeys(),
			Refresh: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "refresh now"))},
		body: newBucketView(l.st, opts.Cost, opts.Window),
	}
}

// live is what every polling screen holds: styles, help, the poller and the size.
type live struct {
	frame
	poll poller
}

// frame is what every live view has: styles, the help line, the terminal's size.
type frame struct {
	st       Styles
	help     help.Model
	w, h     int
	showHelp bool
}

// newFrame is a frame in st, at 80×24 until told the size.
func newFrame(st Styles) frame { return frame{st: st, help: st.NewHelp(), w: 80, h: 24} }

// newLive fills in o's defaults and builds the shared parts.
func newLive(o *LiveOptions) live {
	o.defaults()
	return live{frame: newFrame(*o.Styles), poll: newPoller(o.Interval, o.Timeout, o.Now)}
}

// headerLines are a live view's first lines: title, and on the right prefix, the refresh
// interval and the time of the last good read; then the banner of a failed read.
func (l *live) headerLines(title, prefix string, o *LiveOptions, hasData bool) []string {
	right := prefix + "every " + FormatDuration(o.Interval)
	if !l.poll.lastOK.IsZero() {
		right += " · read " + l.poll.lastOK.Format("15:04:05")
	}
	lines := []string{header(title, l.st.Subtle.Render(right), l.w)}
	if l.poll.err != nil {
		lines = append(lines, l.poll.banner(l.st, l.w, o.Addr, hasData))
	}
	return lines
}

func (f *frame) resize(msg tea.WindowSizeMsg) {
	f.w, f.h = msg.Width, msg.Height
	f.help.Width = msg.Width
}

type watchTickMsg struct{}

type watchReadMsg struct {
	state bucket.State
	err   error
}

// Init starts the first read and the refresh ticker.
func (m Watch) Init() tea.Cmd {
	return tea.Batch(m.fetch(), m.poll.tick(watchTickMsg{}))
}

func (m *Watch) fetch() tea.Cmd {
	src := m.src
	return m.poll.fetch(func(ctx context.Context) tea.Msg {
		st, err := src(ctx)
		return watchReadMsg{state: st, err: err}
	})
}

// Update handles keys, resizes, ticks and reads.
func (m Watch) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, m.keys.Quit):
			m.poll.stop()
			return m, tea.Quit
		case key.Matches(msg, m.keys.Help):
			m.showHelp = !m.showHelp
		case key.Matches(msg, m.keys.Refresh):
			return m, m.fetch()
		}
	case watchTickMsg:
		return m, tea.Batch(m.poll.tick(msg), m.fetch())
	case watchReadMsg:
		m.poll.finish(msg.err)
		if msg.err == nil {
			m.body.observe(msg.state)
		}
	}
	return m, nil
}

// View renders the screen.
func (m Watch) View() string {
	keyName := m.opts.Key
	if m.body.has {
		keyName = m.body.cur.Key
	}
	title := m.st.Title.Render("bucketctl watch") + " " + m.st.Value.Render(keyName)
	top := m.headerLines(title, "", &m.opts.LiveOptions, m.body.has)
	bottom := helpFooter(m.help, m.keys, m.showHelp, m.st, m.w,
		"1 pipelined round trip per refresh (TIME, TYPE, PTTL and the bucket's fields); nothing is written")
	bodyH := m.h - lineCount(top) - lineCount(bottom) - 1
	body := m.body.view(m.w, bodyH, m.poll.err != nil)
	return screen(m.w, m.h, top, body, bottom)
}

// lineCount is how many lines the parts take.
func lineCount(parts []string) int {
	n := 0
	for _, p := range parts {
		n += strings.Count(p, "\n") + 1
	}
	return n
}

// header puts left and right on one line of width w, right-aligned; right goes first
// when the line is too narrow for both.
func header(left, right string, w int) string {
	lw, rw := lipgloss.Width(left), lipgloss.Width(right)
	if lw+1+rw > w {
		return trunc(left, w)
	}
	return left + strings.Repeat(" ", w-lw-rw) + right
}

// screen stacks top lines, a blank line, the body and the bottom lines into exactly h
// lines of at most w cells: the body is cut or padded so the bottom stays at the bottom.
func screen(w, h int, top []string, body string, bottom []string) string {
	var lines []string
	for _, l := range top {
		lines = append(lines, strings.Split(l, "\n")...)
	}
	lines = append(lines, "")
	var tail []string
	for _, l := range bottom {
		tail = append(tail, strings.Split(l, "\n")...)
	}
	room := h - len(lines) - len(tail)
	bl := strings.Split(body, "\n")
	if room < 0 {
		room = 0
	}
	if len(bl) > room {
		bl = bl[:room]
	}
	for len(bl) < room {
		bl = append(bl, "")
	}
	lines = append(append(lines, bl...), tail...)
	if len(lines) > h && h > 0 {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = trunc(l, w)
	}
	return strings.Join(lines, "\n")
}

// poller keeps the polling state of a screen: at most one read in flight, the last error,
// and when the last good read came back.
type poller struct {
	interval, timeout time.Duration
	now               func() time.Time

	inflight *bool // shared by the model's copies
	parent   context.Context
	cancel   context.CancelFunc

	err    error
	errAt  time.Time
	lastOK time.Time
}

func newPoller(interval, timeout time.Duration, now func() time.Time) poller {
	ctx, cancel := context.WithCancel(context.Background())
	return poller{interval: interval, timeout: timeout, now: now, inflight: new(bool), parent: ctx, cancel: cancel}
}

// tick re-arms the refresh ticker: msg arrives after one interval.
func (p *poller) tick(msg tea.Msg) tea.Cmd {
	return tea.Tick(p.interval, func(time.Time) tea.Msg { return msg })
}

// fetch runs read (bounded by the timeout) unless a read is in flight; the screen calls
// finish when read's message arrives.
func (p *poller) fetch(read func(context.Context) tea.Msg) tea.Cmd {
	if *p.inflight {
		return nil
	}
	*p.inflight = true
	ctx, cancel := context.WithTimeout(p.parent, p.timeout)
	return func() tea.Msg {
		defer cancel()
		return read(ctx)
	}
}

// finish records the outcome of the read in flight.
func (p *poller) finish(err error) {
	*p.inflight = false
	if err != nil {
		p.err, p.errAt = err, p.now()
		return
	}
	p.err, p.lastOK = nil, p.now()
}

// stop cancels the read in flight (the program is quitting).
func (p *poller) stop() { p.cancel() }

// banner is the failed-read banner: address, cause, age of the data still shown.
func (p *poller) banner(st Styles, w int, addr string, hasData bool) string {
	return problemBanner(st, w, addr, p.err, p.errAt.Sub(p.lastOK), hasData && !p.lastOK.IsZero(), p.interval)
}
