package tui

import (
	"context"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/bucketctl/bucketctl/tui/format"
)

type topKeys struct {
	globalKeys
	Up, Down, PageUp, PageDown, Home, End key.Binding
	Detail, Back, Filter, Sort, Reverse   key.Binding
	Reset, Refresh, Pause                 key.Binding
	SortBy                                [4]key.Binding // 1-4: by fill, deny/s, name, busy
}

func newTopKeys() topKeys {
	return topKeys{
		globalKeys: newGlobalKeys(),
		Up:         binding("↑/k", "up", "up", "k"),
		Down:       binding("↓/j", "down", "down", "j"),
		PageUp:     binding("pgup", "page up", "pgup", "ctrl+b"),
		PageDown:   binding("pgdn", "page down", "pgdown", "ctrl+f"),
		Home:       binding("g", "top (follow it)", "home", "g"),
		End:        binding("G", "last", "end", "G"),
		Detail:     helpItem("enter", "detail"),
		Back:       binding("esc", "clear filter", "esc"),
		Filter:     helpItem("/", "filter"),
		Sort:       helpItem("s", "sort"),
		Reverse:    helpItem("S", "reverse"),
		Reset:      helpItem("r", "reset"),
		Refresh:    helpItem("ctrl+r", "refresh now"),
		Pause:      binding("space", "pause", " "),
		SortBy: [4]key.Binding{helpItem("1", "by fill"), helpItem("2", "by deny/s"),
			helpItem("3", "by name"), helpItem("4", "by busy")},
	}
}

func (k topKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.Up, k.Down, k.Detail, k.Filter, k.Sort, k.Reverse, k.Pause, k.Reset}, k.bindings()...)
}

func (k topKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Detail, k.Filter, k.Back, k.Reset, k.Refresh, k.Pause},
		append([]key.Binding{k.Sort, k.Reverse}, k.SortBy[:]...),
		k.bindings(),
	}
}

// topDetailKeys are the keys of the detail pane, for its help.
type topDetailKeys struct{ topKeys }

func (k topDetailKeys) back() key.Binding { return binding("esc", "back", "esc", "enter") }

func (k topDetailKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.back(), k.Reset, k.Pause, k.Refresh}, k.bindings()...)
}

func (k topDetailKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.back(), k.Reset, k.Refresh, k.Pause}, k.bindings()}
}

// answerKeys are the help of a question (the reset dialog, the filter line).
type answerKeys []key.Binding

func (a answerKeys) ShortHelp() []key.Binding  { return a }
func (a answerKeys) FullHelp() [][]key.Binding { return [][]key.Binding{a} }

func (m Top) onKey(msg tea.KeyMsg) (Top, tea.Cmd) {
	k := m.keys
	if msg.String() == "ctrl+c" {
		m.cancel()
		return m, tea.Quit
	}
	if m.confirm != nil {
		switch msg.String() {
		case "y", "Y":
			st := *m.confirm
			m.confirm = nil
			m.pinned, m.sel = true, st.Key
			src, ctx, timeout := m.src, m.parent, m.Timeout
			return m, func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				return topResetMsg{key: st.Key, err: src.Reset(ctx, st)}
			}
		case "n", "N", "esc", "q":
			m.confirm = nil
			return m, m.say("reset cancelled", m.st.Good)
		}
		return m, nil
	}
	if m.filtering {
		m.typeFilter(msg)
		return m, nil
	}
	for i, b := range k.SortBy {
		if !m.detail && key.Matches(msg, b) {
			m.setSort(SortBy(i))
			return m, nil
		}
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.cancel()
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		m.scroll()
	case key.Matches(msg, k.Pause):
		return m, m.setPaused(!m.paused)
	case key.Matches(msg, k.Refresh):
		if m.paused {
			return m, m.say("paused: space resumes", m.st.Good)
		}
		return m, m.fetch()
	case key.Matches(msg, k.Reset):
		return m.askReset()
	case m.showHelp && msg.Type == tea.KeyEsc:
		m.showHelp = false
		m.scroll()
	case m.detail:
		if key.Matches(msg, k.Detail, k.Back) {
			m.detail, m.showHelp = false, false
			m.scroll()
		}
	case key.Matches(msg, k.Back):
		if m.filter != "" {
			m.filter = ""
			m.refilter()
		}
	case key.Matches(msg, k.Detail):
		m.openDetail()
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.Sort):
		m.setSort(sortCycle[m.sortBy])
	case key.Matches(msg, k.Reverse):
		m.reverse = !m.reverse
		m.refilter()
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-m.tableRows())
	case key.Matches(msg, k.PageDown):
		m.move(m.tableRows())
	case key.Matches(msg, k.Home):
		m.home()
	case key.Matches(msg, k.End):
		m.move(len(m.visible))
	}
	return m, nil
}

// typeFilter edits the filter line: enter keeps it, esc clears it.
func (m *Top) typeFilter(msg tea.KeyMsg) {
	f := []rune(m.filter)
	switch {
	case msg.String() == "enter":
		m.filtering = false
		return
	case msg.String() == "esc":
		m.filtering, m.filter = false, ""
		m.refilter()
		return
	case msg.Type == tea.KeyRunes || msg.Type == tea.KeySpace:
		f = append(f, msg.Runes...)
	case msg.Type == tea.KeyBackspace || msg.Type == tea.KeyCtrlH:
		f = f[:max(0, len(f)-1)]
	case msg.Type == tea.KeyCtrlU:
		f = nil
	}
	if string(f) != m.filter {
		m.filter = string(f)
		m.refilter()
	}
}

// askReset opens the reset dialog for the bucket in the detail pane or under the cursor.
func (m Top) askReset() (Top, tea.Cmd) {
	r := m.selected()
	switch {
	case m.detail && m.detailGone, !m.detail && r != nil && r.gone:
		k := m.sel
		if m.detail {
			k = m.detailView.cur.Key
		}
		return m, m.say(format.SafeKey(k)+" is gone already: it reads as full", m.st.Good)
	case m.detail:
		st := m.detailView.cur
		m.confirm = &st
	case r != nil:
		st := r.state
		m.confirm = &st
	}
	return m, nil
}

func (m *Top) openDetail() {
	r := m.selected()
	if r == nil {
		return
	}
	m.pinned = true
	m.detail, m.detailGone, m.showHelp = true, r.gone, false
	cost := m.Cost
	if m.opts.CostOf != nil {
		cost = m.opts.CostOf(r.state.Key)
	}
	m.detailView = newBucketView(m.st, cost, m.Window)
	if r.hasPrev {
		m.detailView.observe(r.prev)
	}
	m.detailView.observe(r.state)
}
