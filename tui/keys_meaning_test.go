package tui

import (
	"testing"

	"github.com/charmbracelet/bubbles/help"
)

// TestKeysMeanOneThing: a key does the same thing in every live view (top's table, its
// detail pane, watch, load), as each view's ? help describes it. enter and esc are the
// exception: they open and close what the view has open (the detail pane, the filter).
func TestKeysMeanOneThing(t *testing.T) {
	top := newTopKeys()
	w := NewWatch(nil, WatchOptions{})
	views := map[string]help.KeyMap{
		"top":        top,
		"top detail": topDetailKeys{top},
		"watch":      w.keys,
		"load":       loadKeys{NewGlobalKeys()},
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
					if prev, ok := seen[k]; ok && prev.desc != b.Help().Desc {
						t.Errorf("key %q is %q in %s but %q in %s", k, prev.desc, prev.view, b.Help().Desc, view)
					}
					seen[k] = use{view, b.Help().Desc}
				}
			}
		}
	}
	if seen["r"].desc != "reset" || seen["ctrl+r"].desc != "refresh now" {
		t.Errorf("r = %q, ctrl+r = %q; want reset and refresh now", seen["r"].desc, seen["ctrl+r"].desc)
	}
}
