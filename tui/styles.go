package tui

import (
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	// Before bubbletea's init: no terminal background query at start-up (see its doc).
	_ "github.com/bucketctl/bucketctl/tui/nobgquery"
)

// Palette colours give their 16-colour fallback explicitly, not lipgloss's nearest match.
var (
	colAccent = lipgloss.CompleteColor{TrueColor: "#7D56F4", ANSI256: "99", ANSI: "5"}
	colGood   = lipgloss.CompleteColor{TrueColor: "#3FB950", ANSI256: "71", ANSI: "2"}
	colWarn   = lipgloss.CompleteColor{TrueColor: "#D29922", ANSI256: "178", ANSI: "3"}
	colBad    = lipgloss.CompleteColor{TrueColor: "#F85149", ANSI256: "203", ANSI: "1"}
	colSubtle = lipgloss.CompleteColor{TrueColor: "#8B949E", ANSI256: "245", ANSI: "8"}
	colEmpty  = lipgloss.CompleteColor{TrueColor: "#30363D", ANSI256: "237", ANSI: "8"}
	colText   = lipgloss.CompleteColor{TrueColor: "#E6EDF3", ANSI256: "255", ANSI: "15"}
	colBanner = lipgloss.CompleteColor{TrueColor: "#8B1A1A", ANSI256: "88", ANSI: "1"}
)

// Styles is every style the screens use, built for one colour profile.
type Styles struct {
	r                                  *lipgloss.Renderer
	Title, Subtle, Stale, Label, Value lipgloss.Style
	Header, Selected, Good, Warn, Bad  lipgloss.Style
	Banner, Notice, Dialog, BarEmpty   lipgloss.Style
	Help                               help.Styles
}

// NewStyles builds the styles for colour profile p (termenv.Ascii draws none).
func NewStyles(p termenv.Profile) Styles {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(p)
	n := r.NewStyle
	helpKey, helpDesc, helpSep := n().Foreground(colAccent), n().Foreground(colSubtle), n().Foreground(colEmpty)
	return Styles{
		r:        r,
		Title:    n().Bold(true).Foreground(colAccent),
		Subtle:   n().Foreground(colSubtle),
		Stale:    n().Foreground(colSubtle).Faint(true),
		Label:    n().Foreground(colSubtle),
		Value:    n().Foreground(colText).Bold(true),
		Header:   n().Bold(true).Foreground(colSubtle).Underline(true),
		Selected: n().Reverse(true),
		Good:     n().Foreground(colGood),
		Warn:     n().Foreground(colWarn),
		Bad:      n().Foreground(colBad).Bold(true),
		Banner:   n().Foreground(colText).Background(colBanner).Bold(true),
		Notice:   n().Foreground(colWarn),
		Dialog:   n().Border(lipgloss.DoubleBorder()).BorderForeground(colBad).Padding(0, 2),
		BarEmpty: n().Foreground(colEmpty),
		Help: help.Styles{Ellipsis: helpDesc, ShortKey: helpKey, ShortDesc: helpDesc, ShortSeparator: helpSep,
			FullKey: helpKey, FullDesc: helpDesc, FullSeparator: helpSep},
	}
}

func (s Styles) kv(label, value string) string { return s.Label.Render(label+" ") + value }

// FillStyle colours a fill level in [0,1]: nearly empty is bad, low a warning.
func (s Styles) FillStyle(fill float64) lipgloss.Style {
	switch {
	case fill < 0.1:
		return s.Bad
	case fill < 0.35:
		return s.Warn
	}
	return s.Good
}

// Bar draws a fill bar of width cells for fill in [0,1], to the eighth of a cell.
func (s Styles) Bar(width int, fill float64) string {
	if width <= 0 {
		return ""
	}
	if !(fill >= 0) {
		fill = 0
	}
	fill = min(fill, 1)
	bar, used := eighthCells(width, fill)
	return s.FillStyle(fill).Render(bar) + s.BarEmpty.Render(strings.Repeat("░", width-used))
}

// eighthCells draws frac in [0,1] of width cells and says how many it used.
func eighthCells(width int, frac float64) (string, int) {
	eighths := int(math.Round(frac * float64(width*8)))
	full, part := eighths/8, eighths%8
	s := strings.Repeat("█", full)
	if part > 0 && full < width {
		return s + string(rune('█'+8-part)), full + 1
	}
	return s, full
}
