package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

type globalKeys struct{ Quit, Help key.Binding }

func newGlobalKeys() globalKeys {
	return globalKeys{Quit: binding("q", "quit", "q", "ctrl+c"), Help: helpItem("?", "help")}
}

func binding(help, desc string, keys ...string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

func helpItem(k, desc string) key.Binding { return binding(k, desc, k) }

func (g globalKeys) bindings() []key.Binding   { return []key.Binding{g.Help, g.Quit} }
func (g globalKeys) ShortHelp() []key.Binding  { return g.bindings() }
func (g globalKeys) FullHelp() [][]key.Binding { return [][]key.Binding{g.bindings()} }

// footer is the short help, or with ? the full help and what the screen costs Redis.
func (f *frame) footer(km help.KeyMap, cost string) []string {
	if f.showHelp {
		return append(fullHelpLines(f.st, km.FullHelp(), f.w), wrapText(f.st.Subtle, "Redis cost: "+cost, f.w)...)
	}
	return shortHelpLines(f.st, km.ShortHelp(), f.w)
}

// shortHelpLines is the one-line help, wrapped rather than cut on a narrow terminal.
func shortHelpLines(st Styles, bindings []key.Binding, w int) []string {
	var items []string
	for _, b := range bindings {
		if b.Enabled() {
			items = append(items, st.Help.ShortKey.Render(b.Help().Key)+" "+st.Help.ShortDesc.Render(b.Help().Desc))
		}
	}
	return wrapJoin(items, st.Help.ShortSeparator.Render(" • "), "", w)
}

// fullHelpLines lays the groups out as columns, as many side by side as fit in w.
func fullHelpLines(st Styles, groups [][]key.Binding, w int) []string {
	h := help.New() // no width: a column is never cut
	h.Styles = st.Help
	var rows []string
	row := ""
	for _, g := range groups {
		col := h.FullHelpView([][]key.Binding{g})
		switch {
		case col == "":
		case row == "":
			row = col
		case lipgloss.Width(row)+4+lipgloss.Width(col) <= w:
			row = lipgloss.JoinHorizontal(lipgloss.Top, row, "    ", col)
		default:
			rows = append(rows, row)
			row = col
		}
	}
	if row != "" {
		rows = append(rows, row)
	}
	var lines []string
	for _, l := range splitAll(rows) {
		lines = append(lines, trunc(strings.TrimRight(l, " "), w))
	}
	return lines
}

// eachKey splits a burst of typed runes ("jjj", which no binding matches) into one-rune
// messages for handle. Once typing(m), the runes left go to the text input as one message;
// once asking(m), they are dropped, so a "y" is typed at the question. Either may be nil.
func eachKey[M any](m M, msg tea.KeyMsg, typing, asking func(M) bool, handle func(M, tea.KeyMsg) (M, tea.Cmd)) (M, tea.Cmd) {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste || msg.Alt {
		return handle(m, msg)
	}
	var cmds []tea.Cmd
	asked := asking != nil && asking(m)
	for i, r := range msg.Runes {
		if !asked && asking != nil && asking(m) {
			break
		}
		one := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}
		if typing != nil && typing(m) {
			one.Runes = msg.Runes[i:]
		}
		var cmd tea.Cmd
		m, cmd = handle(m, one)
		cmds = append(cmds, cmd)
		if len(one.Runes) > 1 {
			break
		}
	}
	return m, tea.Batch(cmds...)
}
