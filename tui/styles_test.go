package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestColoursDegrade(t *testing.T) {
	bar := func(p termenv.Profile) string { return NewStyles(p).Bar(10, 0.05) }
	if s := bar(termenv.Ascii); strings.Contains(s, "\x1b") || lipgloss.Width(s) != 10 || !strings.Contains(s, "▌") {
		t.Errorf("no-colour bar %q: want glyphs only, 10 cells", s)
	}
	if s := bar(termenv.ANSI); !strings.Contains(s, "31") || strings.Contains(s, "38;5") || strings.Contains(s, "38;2") {
		t.Errorf("16-colour bar %q: want the basic red (31), no 256 or true colours", s)
	}
	if s := bar(termenv.ANSI256); !strings.Contains(s, "38;5;203") {
		t.Errorf("256-colour bar %q", s)
	}
	if s := bar(termenv.TrueColor); !strings.Contains(s, "38;2;") {
		t.Errorf("true-colour bar %q", s)
	}
	t.Setenv("NO_COLOR", "1")
	if s := NewStyles(lipgloss.NewRenderer(&strings.Builder{}).ColorProfile()).Bad.Render("x"); s != "x" {
		t.Errorf("NO_COLOR still styles: %q", s)
	}
}

func TestBarLevels(t *testing.T) {
	st := testStyles
	for _, c := range []struct {
		fill float64
		want string
	}{
		{0, "░░░░"}, {1, "████"}, {0.5, "██░░"}, {0.125, "▌░░░"}, {0.0625, "▎░░░"}, {2, "████"}, {-1, "░░░░"},
	} {
		if got := st.Bar(4, c.fill); got != c.want {
			t.Errorf("Bar(4, %v) = %q, want %q", c.fill, got, c.want)
		}
	}
}
