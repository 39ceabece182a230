package tui

import (
	"context"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

type topKeys struct {
	GlobalKeys
	Up, Down, PageUp, PageDown, Home, End key.Binding
	Detail, Back, Filter, Sort            key.Binding
	SortFill, SortDeny, SortName          key.Binding
	Reset, Refresh                        key.Binding
}

func newTopKeys() topKeys {
	b := func(help string, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return topKeys{
		GlobalKeys: NewGlobalKeys(),
		Up:         b("↑/k", "up", "up", "k"),
		Down:       b("↓/j", "down", "down", "j"),
		PageUp:     b("pgup", "page up", "pgup", "ctrl+b"),
		PageDown:   b("pgdn", "page down", "pgdown", "ctrl+f", " "),
		Home:       b("g", "first", "home", "g"),
		End:        b("G", "last", "end", "G"),
		Detail:     b("enter", "detail", "enter"),
		Back:       b("esc", "back", "esc"),
		Filter:     b("/", "filter", "/"),
		Sort:       b("s", "sort", "s"),
		SortFill:   b("1", "by fill", "1"),
		SortDeny:   b("2", "by deny/s", "2"),
		SortName:   b("3", "by name", "3"),
		Reset:      b("r", "reset", "r"),
		Refresh:    b("ctrl+r", "refresh now", "ctrl+r"),
	}
}

func (k topKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.Up, k.Down, k.Detail, k.Filter, k.Sort, k.Reset}, k.bindings()...)
}

func (k topKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Detail, k.Back, k.Filter, k.Reset, k.Refresh},
		{k.Sort, k.SortFill, k.SortDeny, k.SortName},
		k.bindings(),
	}
}

func (m Top) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	m.notice, m.noticeE = "", false // a notice stays until the next key
	if m.confirm != nil {
		switch msg.String() {
		case "y", "Y":
			st := *m.confirm
			m.confirm = nil
			src, ctx := m.src, m.poll.parent
			timeout := m.opts.Timeout
			return m, func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				return topResetMsg{key: st.Key, err: src.Reset(ctx, st)}
			}
		case "n", "N", "esc", "q":
			m.confirm = nil
			m.notice, m.noticeE = "reset cancelled", false
		case "ctrl+c":
			m.poll.stop()
			return m, tea.Quit
		}
		return m, nil
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			return m, nil
		case "esc":
			m.filtering = false
			m.filter.SetValue("")
			m.refilter()
			return m, nil
		case "ctrl+c":
			m.poll.stop()
			return m, tea.Quit
		}
		if m.filter.update(msg) {
			m.refilter()
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.poll.stop()
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, k.Back):
		if m.detail {
			m.detail = false
		} else if m.filter.Value() != "" {
			m.filter.SetValue("")
			m.refilter()
		}
	case key.Matches(msg, k.Refresh):
		return m, m.fetch()
	case key.Matches(msg, k.Reset):
		switch r := m.selected(); {
		case m.detail && m.detailGone:
			m.notice, m.noticeE = m.detailView.cur.Key+" is gone already: it reads as full", false
		case m.detail:
			st := m.detailView.cur
			m.confirm = &st
		case r != nil:
			st := r.state
			m.confirm = &st
		}
	case m.detail:
		if key.Matches(msg, k.Detail) {
			m.detail = false
		}
	case key.Matches(msg, k.Detail):
		if r := m.selected(); r != nil {
			m.detail, m.detailGone = true, false
			cost := m.opts.Cost
			if m.opts.CostOf != nil {
				cost = m.opts.CostOf(r.state.Key)
			}
			m.detailView = newBucketView(m.st, cost, m.opts.Window)
			if r.hasPrev {
				m.detailView.observe(r.prev)
			}
			m.detailView.observe(r.state)
		}
	case key.Matches(msg, k.Filter):
		m.filtering = true
	case key.Matches(msg, k.Sort):
		m.setSort((m.sortBy + 1) % sortModes)
	case key.Matches(msg, k.SortFill):
		m.setSort(SortFill)
	case key.Matches(msg, k.SortDeny):
		m.setSort(SortDeny)
	case key.Matches(msg, k.SortName):
		m.setSort(SortName)
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.PageUp):
		m.move(-m.tableRows())
	case key.Matches(msg, k.PageDown):
		m.move(m.tableRows())
	case key.Matches(msg, k.Home):
		m.move(-len(m.visible))
	case key.Matches(msg, k.End):
		m.move(len(m.visible))
	}
	return m, nil
}
