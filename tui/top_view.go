package tui

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"

	"github.com/bucketctl/bucketctl/tui/format"
)

// View renders the dashboard.
func (m Top) View() string {
	return screen(m.w, m.h, m.topLines(), m.bottomLines(), func(h int) string {
		switch {
		case m.confirm != nil:
			return m.dialog(h)
		case m.detail:
			return m.detailBody(h)
		case !m.haveSnap && m.err == nil:
			return m.st.Subtle.Render("scanning…")
		}
		return m.table(max(1, h-2)) // as tableRows, without rendering the chrome again
	})
}

func (m *Top) topLines() []string {
	var extra []string
	if m.haveSnap {
		switch {
		case m.partial() && m.snap.Keyspace > 0:
			// First, so it stays when the header narrows and drops the coverage.
			extra = append(extra, format.GroupDigits(len(m.snap.States))+" kept of ~"+format.Plural(m.snap.Keyspace, "key"),
				m.snap.Coverage)
		case m.partial():
			extra = append(extra, format.Plural(len(m.snap.States), "bucket")+" kept", m.snap.Coverage)
		default:
			extra = append(extra, format.Plural(len(m.snap.States), "bucket"))
		}
	}
	label := ""
	if m.opts.Match != "" {
		label = "match"
	}
	lines := m.headerLines("bucketctl top", label, m.opts.Match, extra, m.haveSnap)
	if m.opts.Hint != "" {
		lines = append(lines, wrapText(m.st.Subtle, m.opts.Hint, m.w)...)
	}
	var status []string
	if m.paused {
		text := "⏸ paused: rows and values frozen; space resumes"
		if m.pending != nil {
			text = "⏸ paused: rows and values frozen, a newer read waits; space resumes"
		}
		status = append(status, m.st.Notice.Render(text))
	}
	if m.haveSnap && m.snap.Took > m.Interval {
		status = append(status, m.st.Warn.Render("⚠ refresh took "+format.Duration(m.snap.Took)+
			" (interval "+format.Duration(m.Interval)+"): refreshing as fast as Redis answers"))
	}
	if line := m.hotLine(); line != "" {
		status = append(status, line)
	}
	if m.notice != "" {
		status = append(status, m.notice)
	}
	for _, s := range status {
		lines = append(lines, wrapLine(s, "", m.w)...)
	}
	return lines
}

const hotMark = "!" // marks the rows of buckets being written now

// hotLine names the buckets being written now, busiest first, or why top cannot tell.
func (m *Top) hotLine() string {
	if !m.haveSnap {
		return ""
	}
	if m.snap.HotNote != "" {
		return m.st.Subtle.Render("hot buckets unavailable: " + m.snap.HotNote)
	}
	if len(m.snap.Hot) == 0 {
		return ""
	}
	keys := slices.Collect(maps.Keys(m.snap.Hot))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(m.snap.Hot[b], m.snap.Hot[a]), strings.Compare(a, b))
	})
	var parts []string
	for _, k := range keys[:min(3, len(keys))] {
		parts = append(parts, format.TruncMiddle(format.SafeKey(k), 40)+" "+format.Rate(m.snap.Hot[k]))
	}
	text := hotMark + " hot now"
	if m.snap.HotSource != "" {
		text += " (" + m.snap.HotSource + ")"
	}
	return m.st.Bad.Render(text+": ") + strings.Join(parts, " · ")
}

// keyMap is the help of what is on screen: the dialog's answers, the filter line's, the
// detail pane's keys or the table's.
func (m *Top) keyMap() help.KeyMap {
	switch {
	case m.confirm != nil:
		return answerKeys{helpItem("y", "reset"), helpItem("n/esc", "cancel")}
	case m.filtering:
		return answerKeys{helpItem("enter", "keep filter"), helpItem("esc", "clear")}
	case m.detail:
		return topDetailKeys{m.keys}
	}
	return m.keys
}

func (m *Top) bottomLines() []string {
	var lines []string
	if m.filtering {
		text := m.st.Value.Render(format.SafeKey(m.filter)) + m.st.Selected.Render(" ")
		if m.filter == "" {
			hint := "part of the key"
			if m.partial() {
				hint += " (filters the " + format.Plural(len(m.snap.States), "bucket") + " kept)"
			}
			text = m.st.Selected.Render(" ") + m.st.Subtle.Render(hint)
		}
		lines = append(lines, trunc(m.st.Title.Render("/")+text, m.w))
	}
	if !m.showHelp || m.confirm != nil || m.filtering {
		return append(lines, shortHelpLines(m.st, m.keyMap().ShortHelp(), m.w)...)
	}
	lines = append(lines, fullHelpLines(m.st, m.keyMap().FullHelp(), m.w)...)
	cost := "Redis cost per refresh: not measured yet"
	if m.haveSnap {
		cost = "Redis cost per refresh: " + m.snap.Cost.String() + ", took " + format.Duration(m.snap.Took) +
			", every " + format.Duration(m.Interval)
	}
	lines = append(lines, "")
	if !m.detail {
		lines = append(lines, wrapText(m.st.Subtle, "Marks: "+hotMark+" before a key: written now (the hot line names the busiest; "+
			"they come first in every order but by name); ▸ the selection. While filtering (/), letters are text, q too: "+
			"enter keeps the filter, esc clears it.", m.w)...)
	}
	for _, p := range []string{cost, "Reads only: each refresh re-reads the buckets kept (one read-script call each, in one pipeline), then scans on where the last one stopped, within --budget commands a second; r writes one bucket, after y."} {
		lines = append(lines, wrapText(m.st.Subtle, p, m.w)...)
	}
	return lines
}

func (m *Top) detailBody(h int) string {
	label := m.st.Label.Render("detail ")
	key := format.TruncMiddle(format.SafeKey(m.detailView.cur.Key), max(8, m.w-lipgloss.Width(label)))
	lines := []string{label + m.st.Value.Render(key)}
	if m.detailGone {
		lines = append(lines, wrapText(m.st.Notice, "not in the last scan: the bucket was reset, expired or was deleted (it reads as full)", m.w)...)
	}
	body := m.detailView.view(m.w, h-len(lines)-1, m.err != nil || m.detailGone)
	return strings.Join(lines, "\n") + "\n\n" + body
}

func (m *Top) dialog(h int) string {
	s := m.confirm
	what := s.Layout.Name + " bucket"
	if s.HasSpec() {
		what += " · " + format.Tokens(s.Tokens) + " / " + format.Tokens(s.Spec.Capacity) + " tokens"
	}
	lines := []string{m.st.Bad.Render("Reset " + format.SafeKey(s.Key) + "?")}
	if srv := m.Server; srv != "" {
		lines = append(lines, m.st.Label.Render("on ")+m.st.Value.Render(srv))
	}
	lines = append(lines, "", what, "It will read as full: this writes to Redis.", "",
		m.st.Title.Render("y")+" reset   "+m.st.Title.Render("n")+" cancel")
	box := m.st.Dialog.Width(min(60, m.w-4)).Render(strings.Join(lines, "\n"))
	return lipgloss.PlaceHorizontal(m.w, lipgloss.Center, box) + strings.Repeat("\n", max(0, h-lipgloss.Height(box)-1))
}
