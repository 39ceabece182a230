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

// Palette colours give their 16-colour fallback explicitly, so a basic terminal gets the
// intended hue instead of lipgloss's nearest match.
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

// Styles is every style the screens use, built from one renderer (tests pin its profile;
// otherwise the terminal and NO_COLOR decide it).
type Styles struct {
	r *lipgloss.Renderer

	// Title is a screen's name in its header line; Subtle is secondary text (labels,
	// units, counts of what is not shown); Stale dims data that is no longer fresh.
	Title, Subtle, Stale lipgloss.Style
	// Label and Value are the two halves of a "label value" pair.
	Label, Value lipgloss.Style
	// Header is a table's column header; Selected is the row under the cursor.
	Header, Selected lipgloss.Style
	// Good, Warn and Bad colour a value by health (a full bucket is good, an empty bad).
	Good, Warn, Bad lipgloss.Style
	// Banner is the error banner (Redis unreachable); Notice a passing message.
	Banner, Notice lipgloss.Style
	Dialog         lipgloss.Style
	// BarEmpty is the empty part of a fill bar (its full part is coloured by FillStyle).
	BarEmpty lipgloss.Style
	Help     help.Styles
}

// NewStyles builds the styles on renderer r (nil: lipgloss's default renderer, which
// follows the terminal and honours NO_COLOR).
func NewStyles(r *lipgloss.Renderer) Styles {
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	n := r.NewStyle
	s := Styles{
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
	}
	s.Help = help.Styles{
		Ellipsis:       n().Foreground(colSubtle),
		ShortKey:       n().Foreground(colAccent),
		ShortDesc:      n().Foreground(colSubtle),
		ShortSeparator: n().Foreground(colEmpty),
		FullKey:        n().Foreground(colAccent),
		FullDesc:       n().Foreground(colSubtle),
		FullSeparator:  n().Foreground(colEmpty),
	}
	return s
}

// NewStylesFor builds the styles for a fixed colour profile (tests pin termenv.Ascii so
// golden files hold no escape codes; termenv.ANSI is what a 16-colour terminal gets).
func NewStylesFor(p termenv.Profile) Styles {
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(p)
	return NewStyles(r)
}

// Renderer returns the renderer the styles were built on.
func (s Styles) Renderer() *lipgloss.Renderer { return s.r }

// NewHelp is a bubbles/help model dressed in these styles.
func (s Styles) NewHelp() help.Model {
	h := help.New()
	h.Styles = s.Help
	return h
}

// FillStyle colours a fill level in [0,1]: a nearly empty bucket (denying soon) is bad,
// a low one a warning, the rest good.
func (s Styles) FillStyle(fill float64) lipgloss.Style {
	switch {
	case fill < 0.1:
		return s.Bad
	case fill < 0.35:
		return s.Warn
	}
	return s.Good
}

// Bar draws a fill bar of width cells for fill in [0,1], with eighth-cell precision. The
// full part is coloured by FillStyle; without colour the glyphs alone show the level.
func (s Styles) Bar(width int, fill float64) string {
	if width <= 0 {
		return ""
	}
	if math.IsNaN(fill) || fill < 0 {
		fill = 0
	}
	fill = math.Min(fill, 1)
	bar, used := eighthCells(width, fill)
	return s.FillStyle(fill).Render(bar) + s.BarEmpty.Render(strings.Repeat("░", width-used))
}

// eighthCells draws frac (clamped to [0,1]) of width cells with eighth-cell precision and
// returns how many cells it used.
func eighthCells(width int, frac float64) (string, int) {
	if math.IsNaN(frac) {
		frac = 0
	}
	eighths := int(math.Round(math.Min(1, math.Max(0, frac)) * float64(width*8)))
	full, part := eighths/8, eighths%8
	s := strings.Repeat("█", full)
	if part > 0 && full < width {
		return s + partials[part], full + 1
	}
	return s, full
}

var partials = [8]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
