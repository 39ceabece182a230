package tui

import (
	"strings"
	"testing"
)

// TestTopFilterTakesQ: while filtering, every letter is text, q too (as in k9s): top goes
// on running with "q" in the filter; esc clears it and leaves the filter; then q quits.
// The table's ? help explains the ! mark and the filter's keys.
func TestTopFilterTakesQ(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 100, 40)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:19"))

	tm.Send(press("?"))
	help := waitView(t, tm, p, contains("Redis cost per refresh"))
	if flat := strings.Join(strings.Fields(help), " "); !strings.Contains(flat, "Marks: ! before a key: written now") ||
		!strings.Contains(flat, "letters are text, q too") {
		t.Errorf("top's ? help does not explain the ! mark and the filter's keys:\n%s", help)
	}
	tm.Send(press("?"))
	waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "Redis cost per refresh") })

	tm.Send(press("/"))
	for _, k := range "queue" {
		tm.Send(press(string(k)))
	}
	screen := waitView(t, tm, p, contains("queue", "enter keep filter"))
	if keys, _ := rowKeys(screen); len(keys) != 1 || keys[0] != "rate:queue" {
		t.Errorf(`filter "queue" (typed with its q) shows %v`, keys)
	}
	tm.Send(press("esc"))
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "enter keep filter") })
	if keys, _ := rowKeys(screen); len(keys) < 20 {
		t.Errorf("esc left the filter with %d rows", len(keys))
	}
	tm.Send(press("q"))
	tm.WaitFinished(t)
}
