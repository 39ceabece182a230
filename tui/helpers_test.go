package tui

import (
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/bucketctl/bucketctl/bucket"
)

// Goldens are rendered without colour so they hold text only; regenerate them with
//
//	go test ./tui -update
var testStyles = NewStyles(termenv.Ascii)

// t0 is the fixed server time of the first read in every test; clock is the fixed wall
// clock the screens show ("read 03:04:05").
var t0 = time.Date(2025, 3, 14, 3, 4, 5, 0, time.UTC)

func clock() time.Time { return t0.Add(30 * time.Second) }

func at(d time.Duration) int64 { return t0.Add(d).UnixMicro() }

// native is a bucket of bucketctl's own layout read at server time now.
func native(key string, now int64, tokens, capacity, rate float64, allowed, denied int64) bucket.State {
	return bucket.State{
		Key: key, Type: "hash", Exists: true, Layout: bucket.NativeLayout,
		Stored: bucket.Level{Tokens: tokens, TS: now - 250_000}, Now: now,
		Spec: bucket.Spec{Capacity: capacity, Rate: rate}, SpecSource: "bucket",
		Tokens: tokens, TTL: 90 * time.Second, Allowed: allowed, Denied: denied,
	}
}

// refused is the error of a dial to a server that is down.
func refused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6379},
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// probe wraps a screen so a test can read what it shows at a given moment while the real
// program runs: a snapMsg makes it send its current View.
type probe struct {
	tea.Model
	views chan string
}

type snapMsg struct{}

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(snapMsg); ok {
		p.views <- p.Model.View()
		return p, nil
	}
	m, cmd := p.Model.Update(msg)
	p.Model = m
	return p, cmd
}

// run starts m in a real bubbletea program at w×h.
func run(t *testing.T, m tea.Model, w, h int) (*teatest.TestModel, *probe) {
	t.Helper()
	p := &probe{Model: m, views: make(chan string, 1)}
	tm := teatest.NewTestModel(t, *p, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, p
}

// waitView polls the screen until cond holds and returns what it shows then.
func waitView(t *testing.T, tm *teatest.TestModel, p *probe, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		tm.Send(snapMsg{})
		select {
		case last = <-p.views:
			if cond(last) {
				return last
			}
		case <-time.After(time.Second):
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("screen never met the condition; last screen:\n%s", last)
	return ""
}

func contains(sub ...string) func(string) bool {
	return func(s string) bool {
		for _, x := range sub {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	}
}

// golden compares a screen with testdata/<test name>.golden.
func golden(t *testing.T, name, screen string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		teatest.RequireEqualOutput(t, []byte(screen+"\n"))
	})
}

// checkSize asserts a screen fills exactly w×h cells and never wider.
func checkSize(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Errorf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := lipgloss.Width(l); n > w {
			t.Errorf("line %d is %d cells wide, want <= %d: %q", i+1, n, w, l)
		}
	}
}

// manualClock is a wall clock that moves only when the test moves it, so screens that
// show ages stay deterministic however often they read it.
type manualClock struct{ ns atomic.Int64 }

func (c *manualClock) now() time.Time          { return t0.Add(time.Duration(c.ns.Load())) }
func (c *manualClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// liveOpts poll every 10 ms with the pinned styles and clock; a read never times out.
func liveOpts() LiveOptions {
	return LiveOptions{Addr: "127.0.0.1:6379", Interval: 10 * time.Millisecond, Timeout: time.Minute,
		Styles: &testStyles, Now: clock}
}
