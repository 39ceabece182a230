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
