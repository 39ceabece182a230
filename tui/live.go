package tui

import (
	"context"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/tui/format"
)

// LiveOptions are what every polling screen takes. Zero values take the defaults.
type LiveOptions struct {
	// Addr is the Redis address, named in the banner when a read fails.
	Addr string
	// Server names the server (and context) in the header, e.g. "10.0.0.12:6379 (context
	// prod)"; empty: Addr.
	Server string
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
	// ErrText is the text an error is shown as: the command's redactor, so that no secret
	// an error quotes reaches the screen (default: the error's own text). Whatever it
	// returns is shown terminal-safe, on one line.
	ErrText func(error) string
}

// errText is the one line err is shown as (see ErrText).
func (o *LiveOptions) errText(err error) string {
	s := ""
	if o.ErrText != nil {
		s = o.ErrText(err)
	} else {
		s = err.Error()
	}
	return oneLine(format.SafeText(s))
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

func newFrame(st Styles) frame { return frame{st: st, help: st.NewHelp(), w: 80, h: 24} }

func newLive(o *LiveOptions) live {
	o.defaults()
	return live{frame: newFrame(*o.Styles), poll: newPoller(o.Interval, o.Timeout, o.Now, o.errText)}
}

func (o *LiveOptions) server() string {
	if o.Server != "" {
		return o.Server
	}
	return o.Addr
}

// headerLines are a live view's first lines: name and subject on the left; the server,
// extra, the interval and the last good read's time on the right, as many as fit (the
// server always shows); then the banner of a failed read.
func (l *live) headerLines(name, label, subject string, extra []string, o *LiveOptions, hasData bool) []string {
	right := append([]string(nil), extra...)
	right = append(right, "every "+format.Duration(o.Interval))
	if !l.poll.lastOK.IsZero() {
		right = append(right, "read "+l.poll.lastOK.Format("15:04:05"))
	}
	lines := l.titleLines(name, label, subject, o.server(), right)
	if l.poll.err != nil {
		lines = append(lines, l.poll.banner(l.st, l.w, o.Addr, hasData))
	}
	return lines
}

func (f *frame) titleLines(name, label, subject, server string, right []string) []string {
	left := func(subjectW int) string {
		s := f.st.Title.Render(name)
		if label != "" {
			s += " " + f.st.Label.Render(label)
		}
		if subject != "" {
			s += " " + f.st.Value.Render(format.TruncMiddle(subject, subjectW))
		}
		return s
	}
	srv := ""
	if server != "" {
		srv = f.st.Label.Render("on ") + f.st.Value.Render(server)
	}
	rightText := func(n int) string {
		parts := []string{}
		if srv != "" {
			parts = append(parts, srv)
		}
		if n > 0 {
			parts = append(parts, f.st.Subtle.Render(strings.Join(right[:n], " · ")))
		}
		return strings.Join(parts, f.st.Subtle.Render(" · "))
	}
	full := lipgloss.Width(subject)
	for n := len(right); n >= 0; n-- {
		if r := rightText(n); lipgloss.Width(left(full))+2+lipgloss.Width(r) <= f.w || (n == 0 && r == "") {
			return []string{header(left(full), r, f.w)}
		}
	}
	r := rightText(0)
	if room := f.w - 2 - lipgloss.Width(r) - lipgloss.Width(left(0)); subject != "" && room >= 8 {
		return []string{header(left(room), r, f.w)}
	}
	return []string{trunc(left(max(8, f.w-lipgloss.Width(left(0)))), f.w), header("", r, f.w)}
}

func (f *frame) resize(msg tea.WindowSizeMsg) {
	f.w, f.h = msg.Width, msg.Height
	f.help.Width = msg.Width
}

func lineCount(parts []string) int {
	n := 0
	for _, p := range parts {
		n += strings.Count(p, "\n") + 1
	}
	return n
}

// header puts left and right on one line of width w, right-aligned; left goes first
// when the line is too narrow for both.
func header(left, right string, w int) string {
	lw, rw := lipgloss.Width(left), lipgloss.Width(right)
	if lw+1+rw > w {
		if lw == 0 {
			return trunc(right, w)
		}
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

	err   error
	errAt time.Time
	// cause is err as show writes it, made once per failure, not on every frame.
	cause  string
	show   func(error) string
	lastOK time.Time
	// hungAt is when a refresh last found a read in flight after a failure: the banner's
	// age goes on growing while Redis hangs, instead of stopping at the last failure.
	hungAt time.Time
}

func newPoller(interval, timeout time.Duration, now func() time.Time, show func(error) string) poller {
	ctx, cancel := context.WithCancel(context.Background())
	return poller{interval: interval, timeout: timeout, now: now, show: show, inflight: new(bool), parent: ctx, cancel: cancel}
}

func (p *poller) tick(msg tea.Msg) tea.Cmd {
	return tea.Tick(p.interval, func(time.Time) tea.Msg { return msg })
}

// ticked notes a refresh tick: while a read is in flight after a failure, the data shown
// is getting older with no new failure to say so.
func (p *poller) ticked() {
	if *p.inflight && p.err != nil {
		p.hungAt = p.now()
	}
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

func (p *poller) finish(err error) {
	*p.inflight = false
	if err != nil {
		p.err, p.cause, p.errAt = err, p.show(err), p.now()
		return
	}
	p.err, p.lastOK = nil, p.now()
}

func (p *poller) stop() { p.cancel() }

// banner is the failed-read banner: address, cause, age of the data still shown.
func (p *poller) banner(st Styles, w int, addr string, hasData bool) string {
	end := p.errAt
	if p.hungAt.After(end) {
		end = p.hungAt
	}
	return problemBanner(st, w, addr, p.err, p.cause, end.Sub(p.lastOK), hasData && !p.lastOK.IsZero(), p.interval)
}

// problemBanner is the banner of a failed refresh: what failed and where, how old the data
// shown is, then the cause, wrapped to width.
func problemBanner(st Styles, width int, addr string, err error, cause string, age time.Duration, hasData bool, interval time.Duration) string {
	what := "Redis error"
	switch {
	case rediserr.IsTimeout(err):
		what = "Redis slow (no answer in time)"
	case rediserr.IsUnreachable(err):
		what = "Redis unreachable"
	}
	if addr != "" {
		what += " at " + addr
	}
	parts := []string{"✖ " + what}
	if hasData {
		parts = append(parts, "showing data from "+format.Duration(age)+" ago")
	}
	parts = append(parts, "retrying every "+format.Duration(interval))
	var lines []string
	for _, l := range wrapJoin(parts, " · ", "", width) {
		lines = append(lines, st.Banner.Render(fit(l, width)))
	}
	causes := strings.Split(ansi.Wrap(cause, max(1, width-2), " "), "\n")
	if len(causes) > 3 {
		causes = append(causes[:2], trunc(causes[2]+" "+strings.Join(causes[3:], " "), width-2))
	}
	for _, c := range causes {
		lines = append(lines, st.Bad.Render("  "+c))
	}
	return strings.Join(lines, "\n")
}
