package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fit truncates s (which may hold escape codes) to width cells with an ellipsis and pads it
// with spaces to exactly width.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	s = ansi.Truncate(s, width, "…")
	if w := lipgloss.Width(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// trunc truncates s to width cells with an ellipsis, without padding.
func trunc(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// padLeft right-aligns s in width cells.
func padLeft(s string, width int) string {
	s = trunc(s, width)
	if w := lipgloss.Width(s); w < width {
		return strings.Repeat(" ", width-w) + s
	}
	return s
}
