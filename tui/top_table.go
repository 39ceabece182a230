package tui

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/tui/format"
)

// column is one column of the table. The key column takes the width left over.
type column struct {
	title string
	width int
	prio  int // lower is kept longer when the terminal narrows
	cell  func(m *Top, r *topRow, w int) string
}

const (
	gutter = 2  // the selection marker
	keyMin = 20 // the key column's least width (less on very narrow terminals)
	barMax = 30
	// essential columns (by priority) are kept before the key column grows.
	essential = 3
)

var topColumns = []column{
	{"FILL", 10, 1, func(m *Top, r *topRow, w int) string { return m.st.Bar(w, r.state.Fill()) }},
	{"TOKENS", 8, 2, func(m *Top, r *topRow, w int) string { return padLeft(format.Tokens(r.state.Tokens), w) }},
	{"CAP", 7, 4, func(m *Top, r *topRow, w int) string { return padLeft(format.Tokens(r.state.Spec.Capacity), w) }},
	{"RATE", 8, 5, func(m *Top, r *topRow, w int) string { return padLeft(format.Rate(r.state.Spec.Rate), w) }},
	{"ALLOW/s", 8, 7, func(m *Top, r *topRow, w int) string {
		return padLeft(rateCell(r.hasAct && r.act.Counted, r.act.Allowed), w)
	}},
	{"DENY/s", 8, 3, func(m *Top, r *topRow, w int) string {
		s := padLeft(rateCell(r.hasAct && r.act.Counted, r.act.Denied), w)
		if r.hasAct && r.act.Denied > 0 {
			return m.st.Bad.Render(s)
		}
		return s
	}},
	{"USE/s", 8, 8, func(m *Top, r *topRow, w int) string {
		return padLeft(rateCell(r.hasAct && r.act.ConsumedKnown, r.act.Consumed), w)
	}},
	{"TTL", 7, 6, func(m *Top, r *topRow, w int) string { return padLeft(format.TTL(r.state.TTL), w) }},
	{"UPDATED", 10, 9, func(m *Top, r *topRow, w int) string {
		if !r.state.Exists {
			return padLeft("never", w)
		}
		return padLeft(format.Age(r.state.Age()), w)
	}},
	{"LAYOUT", 10, 10, func(m *Top, r *topRow, w int) string { return trunc(r.state.Layout.Name, w) }},
}

func rateCell(known bool, v float64) string {
	if !known {
		return "–"
	}
	return format.PerSecond(v)
}

// columns picks the columns that fit in w and the key's width: the sorted and essential
// columns, the key up to keyWant or 2/5 of w, the others by priority; the rest widens the
// fill bar, then the key.
func columns(w, keyWant int, sorted string) (cols []column, keyW int) {
	avail := w - gutter
	kmin := min(keyMin, max(8, avail/2))
	keyCap := max(kmin, avail*2/5)
	byPrio := slices.Clone(topColumns)
	for i := range byPrio {
		if byPrio[i].title == sorted {
			byPrio[i].prio = 0
		}
	}
	sort.SliceStable(byPrio, func(i, j int) bool { return byPrio[i].prio < byPrio[j].prio })
	used := 0
	keep := map[string]bool{}
	keyW = kmin
	for _, c := range byPrio {
		if c.prio > essential && keyW == kmin {
			keyW = max(kmin, min(keyWant, keyCap, avail-used))
		}
		if keyW+used+1+c.width > avail {
			break
		}
		used += 1 + c.width
		keep[c.title] = true
	}
	keyW = max(kmin, min(max(keyW, keyWant), avail-used))
	extra := max(0, avail-used-keyW)
	for _, c := range topColumns {
		if !keep[c.title] {
			continue
		}
		if c.title == "FILL" {
			grow := min(extra, barMax-c.width)
			c.width += grow
			extra -= grow
		}
		cols = append(cols, c)
	}
	return cols, keyW + extra
}

func (m *Top) table(n int) string {
	cols, keyW := columns(m.w, m.keyWant, m.sortBy.column())
	hdr := strings.Repeat(" ", gutter) + fit("KEY", keyW)
	for _, c := range cols {
		if c.title == "FILL" || c.title == "LAYOUT" {
			hdr += " " + fit(c.title, c.width)
		} else {
			hdr += " " + padLeft(c.title, c.width)
		}
	}
	lines := []string{m.st.Header.Render(hdr)}
	end := min(len(m.visible), m.offset+n)
	for i := m.offset; i < end; i++ {
		lines = append(lines, m.row(&m.rows[m.visible[i]], i == m.cursor, cols, keyW))
	}
	if len(m.visible) == 0 {
		lines = append(lines, m.st.Subtle.Render(m.emptyText()))
	}
	return strings.Join(append(lines, m.st.Subtle.Render(trunc(m.moreText(end), m.w))), "\n")
}

// partial says the rows are the buckets top keeps of a larger keyspace, not every match.
func (m *Top) partial() bool { return m.haveSnap && m.snap.Coverage != "" }

func (m *Top) emptyText() string {
	switch {
	case m.filter != "" && m.partial(): // the key may well exist beyond the rows kept
		head := "none of the " + format.Plural(len(m.snap.States), "bucket") + " kept contains " + strconv.Quote(m.filter)
		for _, s := range []string{
			" (top keeps the emptiest, most denied and first by name; look a key up with 'bucketctl inspect KEY' or narrow --match)",
			"; look it up with 'bucketctl inspect KEY' or narrow --match",
			"; try 'bucketctl inspect KEY'",
		} {
			if len([]rune(head+s)) <= m.w {
				return head + s
			}
		}
		return trunc(head, m.w)
	case m.filter != "":
		return "no bucket key contains " + strconv.Quote(m.filter) + " (esc clears the filter)"
	case m.opts.Match != "":
		return "no key matches " + strconv.Quote(m.opts.Match)
	}
	return "no keys"
}

func (m *Top) moreText(end int) string {
	var parts []string
	if len(m.visible) > 0 {
		of := format.GroupDigits(len(m.visible))
		if m.partial() && m.filter == "" {
			of += " kept" // not every bucket there is
		}
		parts = append(parts, fmt.Sprintf("%s–%s of %s", format.GroupDigits(m.offset+1), format.GroupDigits(end), of))
	}
	if rest := len(m.visible) - end; rest > 0 {
		parts = append(parts, "+"+format.GroupDigits(rest)+" more below")
	}
	if f := m.filter; f != "" {
		hidden := " (" + format.GroupDigits(len(m.rows)-len(m.visible)) + " hidden)"
		if m.partial() {
			hidden = " of the " + format.GroupDigits(len(m.snap.States)) + " kept" + hidden
		}
		parts = append(parts, "filter "+strconv.Quote(f)+hidden)
	}
	parts = append(parts, "sort "+m.sortBy.label(m.reverse))
	return strings.Join(parts, " · ")
}

func (m *Top) row(r *topRow, selected bool, cols []column, keyW int) string {
	mark := "  "
	switch {
	case selected:
		mark = "▸ "
	case r.hot > 0:
		mark = m.st.Bad.Render(hotMark) + " "
	}
	line := fit(format.TruncMiddle(format.SafeKey(r.state.Key), keyW), keyW)
	if r.gone || r.state.Problem != "" || !r.state.HasSpec() {
		msg := r.state.Problem
		switch {
		case r.gone:
			msg = "gone: not in the last scan (reset, expired or deleted); it reads as full"
		case msg == "" && !r.state.LevelKnown():
			msg = fmt.Sprintf("? tokens (%s layout: a TAT needs capacity and rate: add a rule)", r.state.Layout.Name)
		case msg == "":
			msg = fmt.Sprintf("%s tokens (%s layout; capacity and rate unknown: add a rule)", format.Tokens(r.state.Tokens), r.state.Layout.Name)
		}
		sty := m.st.Subtle
		if r.state.Problem != "" && !r.gone {
			sty = m.st.Bad
		}
		line += " " + sty.Render(trunc(msg, m.w-gutter-keyW-1))
	} else {
		for _, c := range cols {
			line += " " + c.cell(m, r, c.width)
		}
	}
	switch {
	case selected: // reverse video in colour; the marker without
		return mark + m.st.Selected.Render(ansi.Strip(line))
	case m.err != nil:
		return mark + m.st.Stale.Render(ansi.Strip(line))
	}
	return mark + line
}
