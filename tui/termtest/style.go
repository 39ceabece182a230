package termtest

import (
	"strconv"
	"strings"
)

// Color is a cell's colour as RGB; Set is false for the terminal's default.
type Color struct {
	Set     bool
	R, G, B uint8
}

// Style is what SGR set for a cell.
type Style struct {
	FG, BG                                 Color
	Bold, Faint, Italic, Underline, Invert bool
}

// Cell is one cell of the screen.
type Cell struct {
	R rune
	Style
}

// Cells returns the rows of the screen (the last h rows written, fewer if fewer were), or
// every row written with all, each cell with its style; rows are trimmed of trailing blank
// unstyled cells.
func (t *Terminal) Cells(all bool) [][]Cell {
	from := t.top()
	if all {
		from = 0
	}
	var out [][]Cell
	for r := from; r < len(t.lines); r++ {
		row := make([]Cell, len(t.lines[r]))
		for c, ch := range t.lines[r] {
			row[c].R = ch
			if c < len(t.styles[r]) {
				row[c].Style = t.styles[r][c]
			}
		}
		for len(row) > 0 && row[len(row)-1].R == ' ' && row[len(row)-1].Style == (Style{}) {
			row = row[:len(row)-1]
		}
		out = append(out, row)
	}
	for len(out) > 0 && len(out[len(out)-1]) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

// sgr applies Select Graphic Rendition parameters ("1;38;5;212").
func (t *Terminal) sgr(params string) {
	var ps []int
	for _, p := range strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' }) {
		n, _ := strconv.Atoi(p)
		ps = append(ps, n)
	}
	if len(ps) == 0 {
		ps = []int{0}
	}
	st := &t.style
	for i := 0; i < len(ps); i++ {
		switch p := ps[i]; {
		case p == 0:
			*st = Style{}
		case p == 1:
			st.Bold = true
		case p == 2:
			st.Faint = true
		case p == 3:
			st.Italic = true
		case p == 4:
			st.Underline = true
		case p == 7:
			st.Invert = true
		case p == 22:
			st.Bold, st.Faint = false, false
		case p == 23:
			st.Italic = false
		case p == 24:
			st.Underline = false
		case p == 27:
			st.Invert = false
		case p >= 30 && p <= 37:
			st.FG = ansi16(p - 30)
		case p >= 90 && p <= 97:
			st.FG = ansi16(p - 90 + 8)
		case p == 39:
			st.FG = Color{}
		case p >= 40 && p <= 47:
			st.BG = ansi16(p - 40)
		case p >= 100 && p <= 107:
			st.BG = ansi16(p - 100 + 8)
		case p == 49:
			st.BG = Color{}
		case p == 38 || p == 48:
			var c Color
			switch {
			case i+2 < len(ps) && ps[i+1] == 5:
				c, i = ansi256(ps[i+2]), i+2
			case i+4 < len(ps) && ps[i+1] == 2:
				c, i = Color{true, uint8(ps[i+2]), uint8(ps[i+3]), uint8(ps[i+4])}, i+4
			default:
				i = len(ps)
			}
			if p == 38 {
				st.FG = c
			} else {
				st.BG = c
			}
		}
	}
}

// The 16 basic colours, as xterm draws them.
var basic = [16][3]uint8{
	{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
}

func ansi16(n int) Color { c := basic[n&15]; return Color{true, c[0], c[1], c[2]} }

// ansi256 is xterm's 256-colour palette: 16 basic colours, a 6×6×6 cube, 24 greys.
func ansi256(n int) Color {
	switch {
	case n < 16:
		return ansi16(n)
	case n < 232:
		n -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return Color{true, level(n / 36), level(n / 6 % 6), level(n % 6)}
	case n < 256:
		g := uint8(8 + 10*(n-232))
		return Color{true, g, g, g}
	}
	return Color{}
}
