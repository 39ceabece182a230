package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// wrapJoin lays parts (which may hold escape codes) out on lines of at most w cells, sep
// between them; a part that does not fit starts the next line after indent, and one wider
// than a line is wrapped within. Nothing is dropped.
func wrapJoin(fields []string, sep, indent string, w int) []string {
	var lines []string
	cur := ""
	for _, f := range fields {
		switch {
		case f == "":
		case cur == "":
			cur = f
		case lipgloss.Width(cur)+lipgloss.Width(sep)+lipgloss.Width(f) <= w:
			cur += sep + f
		default:
			lines = append(lines, cur)
			cur = indent + f
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	var out []string
	for _, l := range lines {
		out = append(out, wrapLine(l, indent, w)...)
	}
	return out
}

// wrapLine breaks a line wider than w cells between its words (within a word only when
// one is wider than a line), continuing after indent.
func wrapLine(s, indent string, w int) []string {
	if lipgloss.Width(s) <= w {
		return []string{s}
	}
	iw := lipgloss.Width(indent)
	if iw >= w/2 {
		indent, iw = "", 0
	}
	parts := strings.Split(ansi.Wrap(s, w-iw, ""), "\n")
	out := make([]string, len(parts))
	for i, p := range parts {
		if i > 0 {
			p = indent + strings.TrimLeft(p, " ")
		}
		out[i] = strings.TrimRight(p, " ")
	}
	return out
}
