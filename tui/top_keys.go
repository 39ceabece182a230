package tui

import (
	"context"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/bucketctl/bucketctl/tui/format"
)

type topKeys struct {
	GlobalKeys
	Up, Down, PageUp, PageDown, Home, End  key.Binding
	Detail, Back, Filter, Sort, Reverse    key.Binding
	SortFill, SortDeny, SortName, SortBusy key.Binding
	Reset, Refresh, Pause                  key.Binding
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
		PageDown:   b("pgdn", "page down", "pgdown", "ctrl+f"),
		Home:       b("g", "top (follow it)", "home", "g"),
		End:        b("G", "last", "end", "G"),
		Detail:     b("enter", "detail", "enter"),
		Back:       b("esc", "clear filter", "esc"),
		Filter:     b("/", "filter", "/"),
		Sort:       b("s", "sort", "s"),
		Reverse:    b("S", "reverse", "S"),
		SortFill:   b("1", "by fill", "1"),
		SortDeny:   b("2", "by deny/s", "2"),
		SortName:   b("3", "by name", "3"),
		SortBusy:   b("4", "by busy", "4"),
		Reset:      b("r", "reset", "r"),
		Refresh:    b("ctrl+r", "refresh now", "ctrl+r"),
		Pause:      b("space", "pause", " "),
	}
}

func (k topKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.Up, k.Down, k.Detail, k.Filter, k.Sort, k.Reverse, k.Pause, k.Reset},
		k.bindings()...)
}

func (k topKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Detail, k.Filter, k.Back, k.Reset, k.Refresh, k.Pause},
		{k.Sort, k.Reverse, k.SortFill, k.SortDeny, k.SortName, k.SortBusy},
		k.bindings(),
	}
}

// topDetailKeys are the keys that work in the detail pane, for its help.
type topDetailKeys struct{ topKeys }

func (k topDetailKeys) back() key.Binding {
	return key.NewBinding(key.WithKeys("esc", "enter"), key.WithHelp("esc", "back"))
}

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

func helpItem(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}

func (m Top) key(msg tea.KeyMsg) (Top, tea.Cmd) {
	k := m.keys
	if msg.String() == "ctrl+c" {
		m.poll.stop()
		return m, tea.Quit
	}
	if m.confirm != nil {
		switch msg.String() {
		case "y", "Y":
			st := *m.confirm
			m.confirm = nil
			m.pinned, m.sel = true, st.Key
			src, ctx := m.src, m.poll.parent
			timeout := m.opts.Timeout
			return m, func() tea.Msg {
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				return topResetMsg{key: st.Key, err: src.Reset(ctx, st)}
			}
		case "n", "N", "esc", "q":
			m.confirm = nil
			return m, m.say("reset cancelled", false)
		}
		return m, nil
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
		case "esc":
			m.filtering = false
			m.filter.SetValue("")
			m.refilter()
		default:
			if m.filter.update(msg) {
				m.refilter()
			}
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.poll.stop()
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
		m.scroll()
	case key.Matches(msg, k.Pause):
		return m, m.setPaused(!m.paused)
	case key.Matches(msg, k.Refresh):
		if m.paused {
			return m, m.say("paused: space resumes", false)
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
		if m.filter.Value() != "" {
			m.filter.SetValue("")
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
	case key.Matches(msg, k.SortFill):
		m.setSort(SortFill)
	case key.Matches(msg, k.SortDeny):
		m.setSort(SortDeny)
	case key.Matches(msg, k.SortName):
		m.setSort(SortName)
	case key.Matches(msg, k.SortBusy):
		m.setSort(SortBusy)
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

// askReset opens the reset dialog for the bucket in the detail pane or under the cursor;
// a bucket already gone needs no reset.
func (m Top) askReset() (Top, tea.Cmd) {
	r := m.selected()
	switch {
	case m.detail && m.detailGone, !m.detail && r != nil && r.gone:
		k := m.sel
		if m.detail {
			k = m.detailView.cur.Key
		}
		return m, m.say(format.SafeKey(k)+" is gone already: it reads as full", false)
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
