package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
)

// View renders the screen.
func (m Top) View() string {
	top, bottom := m.topLines(), m.bottomLines()
	bodyH := m.h - lineCount(top) - 1 - lineCount(bottom)
	var body string
	switch {
	case m.confirm != nil:
		body = m.dialog(bodyH)
	case m.detail:
		body = m.detailBody(bodyH)
	case !m.haveSnap && m.poll.err == nil:
		body = m.st.Subtle.Render("scanning…")
	default:
		body = m.table(max(1, bodyH-2)) // as tableRows, without rendering the chrome again
	}
	return screen(m.w, m.h, top, body, bottom)
}

func (m *Top) topLines() []string {
	title := m.st.Title.Render("bucketctl top")
	if m.opts.Match != "" {
		title += " " + m.st.Label.Render("match ") + m.st.Value.Render(m.opts.Match)
	}
	count := ""
	if m.haveSnap {
		count = Plural(len(m.snap.States), "bucket") + " · "
	}
	lines := m.headerLines(title, count, &m.opts.LiveOptions, m.haveSnap)
	var status []string
	if m.haveSnap && m.snap.Took > m.opts.Interval {
		status = append(status, m.st.Warn.Render("⚠ refresh took "+FormatDuration(m.snap.Took)+
			" (interval "+FormatDuration(m.opts.Interval)+"): refreshing as fast as Redis answers"))
	}
	if m.notice != "" {
		sty := m.st.Good
		if m.noticeE {
			sty = m.st.Bad
		}
		status = append(status, sty.Render(m.notice))
	}
	if len(status) > 0 {
		lines = append(lines, trunc(strings.Join(status, "  "), m.w))
	}
	return lines
}

func (m *Top) bottomLines() []string {
	if m.filtering {
		return []string{m.filter.view(m.st, m.w), m.help.ShortHelpView([]key.Binding{
			key.NewBinding(key.WithHelp("enter", "keep filter")),
			key.NewBinding(key.WithHelp("esc", "clear")),
		})}
	}
	if !m.showHelp {
		return []string{m.help.ShortHelpView(m.keys.ShortHelp())}
	}
	lines := strings.Split(m.help.FullHelpView(m.keys.FullHelp()), "\n")
	cost := "Redis cost per refresh: not measured yet"
	if m.haveSnap {
		cost = "Redis cost per refresh: " + m.snap.Cost.String() + ", took " + FormatDuration(m.snap.Took) +
			", every " + FormatDuration(m.opts.Interval)
	}
	lines = append(lines, "")
	wrap := m.st.Subtle.Width(m.w)
	for _, p := range []string{cost, "Reads only: SCAN on every master, then the buckets' TYPE, PTTL and fields in pipelines; a reset writes one bucket, after y."} {
		lines = append(lines, strings.Split(wrap.Render(p), "\n")...)
	}
	return lines
}

func (m *Top) detailBody(h int) string {
	title := m.st.Label.Render("detail ") + m.st.Value.Render(m.detailView.cur.Key) +
		m.st.Subtle.Render("  (esc back · r reset)")
	lines := []string{trunc(title, m.w)}
	if m.detailGone {
		lines = append(lines, m.st.Notice.Render(trunc("not in the last scan: the bucket expired or was deleted (it reads as full)", m.w)))
	}
	body := m.detailView.view(m.w, h-len(lines)-1, m.poll.err != nil || m.detailGone)
	return strings.Join(lines, "\n") + "\n\n" + body
}

func (m *Top) dialog(h int) string {
	s := m.confirm
	what := s.Layout.Name + " bucket"
	if s.HasSpec() {
		what += " · " + FormatTokens(s.Tokens) + " / " + FormatTokens(s.Spec.Capacity) + " tokens"
	}
	text := strings.Join([]string{
		m.st.Bad.Render("Reset " + s.Key + "?"),
		"",
		what,
		"It will read as full: this writes to Redis.",
		"",
		m.st.Title.Render("y") + " reset   " + m.st.Title.Render("n") + " cancel",
	}, "\n")
	box := m.st.Dialog.Width(min(60, m.w-4)).Render(text)
	return lipgloss.PlaceHorizontal(m.w, lipgloss.Center, box) + strings.Repeat("\n", max(0, h-lipgloss.Height(box)-1))
}
