package tui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
)

// Every screen has its own keymap type holding its bindings as key.Binding fields and
// implementing help.KeyMap (ShortHelp for the one-line help, FullHelp for the columns `?`
// opens). The bindings every screen shares are built here so they read the same everywhere.

// GlobalKeys are the bindings of every screen: quit and the help toggle.
type GlobalKeys struct {
	Quit key.Binding
	Help key.Binding
}

// NewGlobalKeys returns q/ctrl+c to quit and ? to toggle the full help.
func NewGlobalKeys() GlobalKeys {
	return GlobalKeys{
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Help: key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	}
}

// bindings returns the global bindings, for appending to a screen's help.
func (g GlobalKeys) bindings() []key.Binding { return []key.Binding{g.Help, g.Quit} }

// helpFooter is a screen's bottom lines: the short help, or with ? the full help and what
// the screen costs Redis.
func helpFooter(h help.Model, km help.KeyMap, full bool, st Styles, w int, cost string) []string {
	if full {
		return []string{h.FullHelpView(km.FullHelp()), st.Subtle.Render(trunc("Redis cost: "+cost, w))}
	}
	return []string{h.ShortHelpView(km.ShortHelp())}
}
