package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// trunc cuts s (which may hold escape codes) to width cells with an ellipsis.
func trunc(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// fit is trunc padded with spaces to exactly width; padLeft right-aligns in width.
func fit(s string, width int) string {
	s = trunc(s, width)
	return s + strings.Repeat(" ", max(0, width-lipgloss.Width(s)))
}

func padLeft(s string, width int) string {
	s = trunc(s, width)
	return strings.Repeat(" ", max(0, width-lipgloss.Width(s))) + s
}

// wrapJoin lays parts out on lines of at most w cells, sep between them; a part that does
// not fit starts the next line after indent, and one wider than a line is wrapped within.
func wrapJoin(parts []string, sep, indent string, w int) []string {
	var lines []string
	cur := ""
	for _, f := range parts {
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

// wrapLine breaks a line wider than w cells between its words, continuing after indent.
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

// wrapText wraps plain text to w cells at spaces and styles each line.
func wrapText(sty lipgloss.Style, text string, w int) []string {
	lines := strings.Split(ansi.Wrap(text, max(1, w), " "), "\n")
	for i, l := range lines {
		lines[i] = sty.Render(strings.TrimRight(l, " "))
	}
	return lines
}

func splitAll(parts []string) []string {
	var lines []string
	for _, p := range parts {
		lines = append(lines, strings.Split(p, "\n")...)
	}
	return lines
}
