package tui

import (
	"cmp"
	"context"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/tui/format"
)

// LiveOptions are what every polling screen takes. Zero values take the defaults.
type LiveOptions struct {
	Addr     string             // the Redis address, named in the banner when a read fails
	Server   string             // names the server (and context) in the header; default Addr
	Interval time.Duration      // between reads (default 1 s)
	Timeout  time.Duration      // of one read (default FetchTimeout)
	Window   time.Duration      // how much history a level chart shows (default 5 min)
	Cost     float64            // the request cost retry-after assumes (default 1)
	Styles   *Styles            // default: the terminal's colours, NO_COLOR honoured
	Now      func() time.Time   // the clock of the refresh time shown (default time.Now)
	ErrText  func(error) string // an error's text (the command's redactor; default its own)
}

func (o *LiveOptions) defaults() {
	o.Interval = cmp.Or(o.Interval, time.Second)
	o.Timeout = cmp.Or(o.Timeout, FetchTimeout(o.Interval))
	o.Window = cmp.Or(o.Window, 5*time.Minute)
	if o.Styles == nil {
		s := NewStyles(lipgloss.ColorProfile())
		o.Styles = &s
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Server = cmp.Or(o.Server, o.Addr)
	if o.ErrText == nil {
		o.ErrText = error.Error
	}
}

func (o *LiveOptions) errText(err error) string { return oneLine(format.SafeText(o.ErrText(err))) }

// FetchTimeout is the default bound of one read: 5 s or three intervals, if longer.
func FetchTimeout(interval time.Duration) time.Duration { return max(5*time.Second, 3*interval) }

// frame is what every screen has: styles, the help toggle, the terminal's size.
type frame struct {
	st       Styles
	w, h     int
	showHelp bool
}

func newFrame(st Styles) frame { return frame{st: st, w: 80, h: 24} }

func (f *frame) resize(msg tea.WindowSizeMsg) { f.w, f.h = msg.Width, msg.Height }

// live is a polling screen's frame, options and polling state (at most one read in flight).
type live struct {
	frame
	LiveOptions
	inflight *bool // shared by the model's copies
	parent   context.Context
	cancel   context.CancelFunc
	err      error
	cause    string // err as errText shows it, made once per failure
	errAt    time.Time
	lastOK   time.Time
	hungAt   time.Time // a tick found a read still in flight after a failure
}

func newLive(o *LiveOptions) live {
	o.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	return live{frame: newFrame(*o.Styles), LiveOptions: *o, inflight: new(bool), parent: ctx, cancel: cancel}
}

type tickMsg struct{}

type readMsg[T any] struct {
	v   T
	err error
}

func tick(every time.Duration) tea.Cmd {
	return tea.Tick(every, func(time.Time) tea.Msg { return tickMsg{} })
}

// ticked notes a tick: while a read hangs after a failure, the data shown gets older.
func (l *live) ticked() {
	if *l.inflight && l.err != nil {
		l.hungAt = l.Now()
	}
}

// fetch runs read unless a read is in flight; the screen calls finish with its readMsg.
func fetch[T any](l *live, read func(context.Context) (T, error)) tea.Cmd {
	if *l.inflight {
		return nil
	}
	*l.inflight = true
	ctx, cancel := context.WithTimeout(l.parent, l.Timeout)
	return func() tea.Msg {
		defer cancel()
		v, err := read(ctx)
		return readMsg[T]{v, err}
	}
}

func (l *live) finish(err error) {
	*l.inflight = false
	if err != nil {
		l.err, l.cause, l.errAt = err, l.errText(err), l.Now()
		return
	}
	l.err, l.lastOK = nil, l.Now()
}

// headerLines are name and subject on the left, as much of the server, extra, the interval
// and the last good read's time as fits on the right, then the banner.
func (l *live) headerLines(name, label, subject string, extra []string, hasData bool) []string {
	right := append(extra, "every "+format.Duration(l.Interval))
	if !l.lastOK.IsZero() {
		right = append(right, "read "+l.lastOK.Format("15:04:05"))
	}
	left := func(subjectW int) string {
		s := l.st.Title.Render(name)
		if label != "" {
			s += " " + l.st.Label.Render(label)
		}
		if subject != "" {
			s += " " + l.st.Value.Render(format.TruncMiddle(subject, subjectW))
		}
		return s
	}
	rightText := func(n int) string {
		var parts []string
		if l.Server != "" {
			parts = append(parts, l.st.Label.Render("on ")+l.st.Value.Render(l.Server))
		}
		if n > 0 {
			parts = append(parts, l.st.Subtle.Render(strings.Join(right[:n], " · ")))
		}
		return strings.Join(parts, l.st.Subtle.Render(" · "))
	}
	full := lipgloss.Width(subject)
	lines := func() []string { // all the right parts that fit, else the subject cut, else two lines
		for n := len(right); n >= 0; n-- {
			if r := rightText(n); lipgloss.Width(left(full))+2+lipgloss.Width(r) <= l.w || (n == 0 && r == "") {
				return []string{header(left(full), r, l.w)}
			}
		}
		r := rightText(0)
		if room := l.w - 2 - lipgloss.Width(r) - lipgloss.Width(left(0)); subject != "" && room >= 8 {
			return []string{header(left(room), r, l.w)}
		}
		return []string{trunc(left(max(8, l.w-lipgloss.Width(left(0)))), l.w), header("", r, l.w)}
	}()
	if l.err != nil {
		lines = append(lines, l.banner(hasData))
	}
	return lines
}

// banner is a failed read's: what failed and where, how old the data shown is, the cause.
func (l *live) banner(hasData bool) string {
	what := "Redis error"
	switch {
	case rediserr.IsTimeout(l.err):
		what = "Redis slow (no answer in time)"
	case rediserr.IsUnreachable(l.err):
		what = "Redis unreachable"
	}
	if l.Addr != "" {
		what += " at " + l.Addr
	}
	parts := []string{"✖ " + what}
	if hasData && !l.lastOK.IsZero() {
		end := l.errAt
		if l.hungAt.After(end) {
			end = l.hungAt
		}
		parts = append(parts, "showing data from "+format.Duration(end.Sub(l.lastOK))+" ago")
	}
	parts = append(parts, "retrying every "+format.Duration(l.Interval))
	var lines []string
	for _, s := range wrapJoin(parts, " · ", "", l.w) {
		lines = append(lines, l.st.Banner.Render(fit(s, l.w)))
	}
	causes := strings.Split(ansi.Wrap(l.cause, max(1, l.w-2), " "), "\n")
	if len(causes) > 3 {
		causes = append(causes[:2], trunc(causes[2]+" "+strings.Join(causes[3:], " "), l.w-2))
	}
	for _, c := range causes {
		lines = append(lines, l.st.Bad.Render("  "+c))
	}
	return strings.Join(lines, "\n")
}

// header puts left and right on one line of w cells; left alone if both do not fit.
func header(left, right string, w int) string {
	lw, rw := lipgloss.Width(left), lipgloss.Width(right)
	switch {
	case lw+1+rw <= w:
		return left + strings.Repeat(" ", w-lw-rw) + right
	case lw == 0:
		return trunc(right, w)
	}
	return trunc(left, w)
}

// screen stacks top, a blank line, body and bottom into exactly h lines of at most w cells.
func screen(w, h int, top, bottom []string, body func(h int) string) string {
	head, tail := append(splitAll(top), ""), splitAll(bottom)
	room := max(0, h-len(head)-len(tail))
	bl := strings.Split(body(h-len(head)-len(tail)), "\n")
	bl = append(bl[:min(room, len(bl))], make([]string, max(0, room-len(bl)))...)
	lines := append(append(head, bl...), tail...)
	if len(lines) > h && h > 0 {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = trunc(l, w)
	}
	return strings.Join(lines, "\n")
}
