package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestColoursDegrade(t *testing.T) {
	bar := func(p termenv.Profile) string { return NewStylesFor(p).Bar(10, 0.05) }
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
	if s := NewStyles(lipgloss.NewRenderer(&strings.Builder{})).Bad.Render("x"); s != "x" {
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

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatTokens(0.5), "0.5"}, {FormatTokens(63.25), "63.2"}, {FormatTokens(1500), "1500"},
		{FormatTokens(12500), "12.5k"}, {FormatTokens(3.1e6), "3.1M"}, {FormatTokens(0), "0"},
		{FormatDuration(850 * time.Millisecond), "850ms"}, {FormatDuration(3700 * time.Millisecond), "3.7s"},
		{FormatDuration(64 * time.Second), "1m4s"}, {FormatDuration(2*time.Hour + 5*time.Minute), "2h5m"},
		{FormatDuration(50 * time.Microsecond), "50µs"}, {FormatDuration(26 * time.Hour), "1d2h"},
		{FormatTTL(-1), "none"}, {FormatTTL(-2), "gone"}, {FormatTTL(90 * time.Second), "1m30s"},
		{FormatPercent(0.144), "14%"}, {groupDigits(10000), "10,000"}, {groupDigits(999), "999"},
		{groupDigits(-1234567), "-1,234,567"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
