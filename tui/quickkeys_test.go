package tui

import (
	"strings"
	"sync/atomic"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// Keys typed quickly arrive in one read as one KeyRunes message of several runes; each
// rune is a key press, except in the filter line where the text is typed as it came.
func TestTopQuickKeys(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	screen := waitView(t, tm, p, contains("33 buckets"))
	keys, _ := rowKeys(screen)

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjj")})
	screen = waitView(t, tm, p, func(s string) bool { _, sel := rowKeys(s); return sel != keys[0] })
	if _, sel := rowKeys(screen); sel != keys[3] {
		t.Errorf(`"jjj" in one message selected %q, want %q (3 rows down)`, sel, keys[3])
	}
	// "/" opens the filter; the runes after it in the same read are typed into it.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k/user:0")})
	screen = waitView(t, tm, p, contains("/user:0"))
	if keys, _ := rowKeys(screen); len(keys) != 9 {
		t.Errorf(`after "k/user:0" rows %v, want the 9 keys with user:0`, keys)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("1j")}) // typed, not moving
	waitView(t, tm, p, contains("/user:01j"))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj"), Paste: true})
	waitView(t, tm, p, contains("/user:01jjj"))
	tm.Send(press("esc"))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("G?")})
	screen = waitView(t, tm, p, contains("Redis cost per refresh"))
	if keys, sel := rowKeys(screen); sel != keys[len(keys)-1] {
		t.Errorf(`"G?" selected %q, want the last row %q`, sel, keys[len(keys)-1])
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "Redis cost per refresh") })
	// "ry" in one read opens the reset question and drops the "y": an answer is typed at
	// the question, never taken from the burst that asked it.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("ry")})
	waitView(t, tm, p, contains("Reset "))
	tm.Send(press("n"))
	waitView(t, tm, p, contains("reset cancelled"))
	if got := src.resetKeys(); len(got) != 0 {
		t.Fatalf(`"ry" in one message reset %v`, got)
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t)
}

func TestWatchQuickKeys(t *testing.T) {
	feed := make(chan read)
	tm, p := run(t, NewWatch(feedSource(feed, new(atomic.Int32)), watchOpts()), 80, 24)
	feed <- read{st: history(1)[0]}
	waitView(t, tm, p, contains("/ 100"))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("j?")})
	waitView(t, tm, p, contains("Redis cost: 1 pipelined round trip"))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?q")})
	tm.WaitFinished(t)
}
