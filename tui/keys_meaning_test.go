package tui

import (
	"testing"

	"github.com/charmbracelet/bubbles/help"
)

// TestKeysMeanOneThing: a key does the same thing in every live view (top's table, its
// detail pane, watch, load), as each view's ? help describes it. enter and esc are the
// exception: they open and close what the view has open (the detail pane, the filter);
// q leaves every view (load says it stops and reports, as leaving it does).
func TestKeysMeanOneThing(t *testing.T) {
	top := newTopKeys()
	w := NewWatch(nil, WatchOptions{})
	views := map[string]help.KeyMap{
		"top":        top,
		"top detail": topDetailKeys{top},
		"watch":      w.keys,
		"load":       NewLoad(nil, LoadOptions{}).keys,
	}
	type use struct{ view, desc string }
	seen := map[string]use{}
	for view, km := range views {
		for _, group := range km.FullHelp() {
			for _, b := range group {
				for _, k := range b.Keys() {
					if k == "enter" || k == "esc" {
						continue
					}
					desc := b.Help().Desc
					if desc == "stop and report" {
						desc = "quit"
					}
					if prev, ok := seen[k]; ok && prev.desc != desc {
						t.Errorf("key %q is %q in %s but %q in %s", k, prev.desc, prev.view, desc, view)
					}
					seen[k] = use{view, desc}
				}
			}
		}
	}
	if seen["r"].desc != "reset" || seen["ctrl+r"].desc != "refresh now" {
		t.Errorf("r = %q, ctrl+r = %q; want reset and refresh now", seen["r"].desc, seen["ctrl+r"].desc)
	}
}
