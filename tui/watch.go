package tui

import (
	"context"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// WatchSource reads the watched bucket once (bucket.Store.Inspect of one key).
type WatchSource func(ctx context.Context) (bucket.State, error)

// WatchOptions configure the watch screen; Key is shown before the first read arrives.
type WatchOptions struct {
	Key string
	LiveOptions
}

type watchKeys struct {
	globalKeys
	Refresh key.Binding
}

func (k watchKeys) ShortHelp() []key.Binding {
	return append([]key.Binding{k.Refresh}, k.bindings()...)
}
func (k watchKeys) FullHelp() [][]key.Binding { return [][]key.Binding{{k.Refresh}, k.bindings()} }

// Watch is the live view of one bucket: gauge, rates, timings and level chart.
type Watch struct {
	live
	src     WatchSource
	watched string
	keys    watchKeys
	body    bucketView
}

func NewWatch(src WatchSource, opts WatchOptions) Watch {
	l := newLive(&opts.LiveOptions)
	return Watch{live: l, src: src, watched: opts.Key,
		keys: watchKeys{newGlobalKeys(), helpItem("ctrl+r", "refresh now")},
		body: newBucketView(l.st, opts.Cost, opts.Window),
	}
}

func (m Watch) Init() tea.Cmd { return tea.Batch(fetch(&m.live, m.src), tick(m.Interval)) }

func (m Watch) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg)
	case tea.KeyMsg:
		return eachKey(m, msg, nil, nil, Watch.onKey)
	case tickMsg:
		m.ticked()
		return m, tea.Batch(tick(m.Interval), fetch(&m.live, m.src))
	case readMsg[bucket.State]:
		m.finish(msg.err)
		if msg.err == nil {
			m.body.observe(msg.v)
		}
	}
	return m, nil
}

func (m Watch) onKey(msg tea.KeyMsg) (Watch, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Quit):
		m.cancel()
		return m, tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, m.keys.Refresh):
		return m, fetch(&m.live, m.src)
	}
	return m, nil
}

func (m Watch) View() string {
	keyName := m.watched
	if m.body.has {
		keyName = m.body.cur.Key
	}
	top := m.headerLines("bucketctl watch", "", format.SafeKey(keyName), nil, m.body.has)
	bottom := m.footer(m.keys, "1 pipelined round trip per refresh (TIME, TYPE, PTTL and the bucket's fields); nothing is written")
	return screen(m.w, m.h, top, bottom, func(h int) string { return m.body.view(m.w, h, m.err != nil) })
}
