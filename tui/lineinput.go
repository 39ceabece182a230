package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/bucketctl/bucketctl/tui/format"
)

// lineInput is a one-line text input: printable keys append, backspace deletes, ctrl+u
// clears.
type lineInput struct {
	prompt, placeholder string
	value               []rune
}

func (l *lineInput) Value() string { return string(l.value) }

func (l *lineInput) update(msg tea.KeyMsg) bool {
	switch msg.Type {
	case tea.KeyRunes, tea.KeySpace:
		l.value = append(l.value, msg.Runes...)
		return len(msg.Runes) > 0
	case tea.KeyBackspace, tea.KeyCtrlH:
		if len(l.value) > 0 {
			l.value = l.value[:len(l.value)-1]
			return true
		}
	case tea.KeyCtrlU:
		changed := len(l.value) > 0
		l.value = nil
		return changed
	}
	return false
}

func (l *lineInput) view(st Styles, w int) string {
	text := st.Value.Render(format.SafeKey(string(l.value))) + st.Selected.Render(" ")
	if len(l.value) == 0 {
		text = st.Selected.Render(" ") + st.Subtle.Render(l.placeholder)
	}
	return trunc(st.Title.Render(l.prompt)+text, w)
}
