package main

import (
	"fmt"
	"html"
	"strings"

	"github.com/bucketctl/bucketctl/tui/termtest"
)

// The picture's look: a dark terminal window.
const (
	cellW, cellH = 8.4, 18.0
	pad          = 14.0
	titleH       = 30.0
	fontSize     = 14
)

var (
	defaultFG = termtest.Color{Set: true, R: 0xd8, G: 0xdc, B: 0xe4}
	defaultBG = termtest.Color{Set: true, R: 0x1c, G: 0x1e, B: 0x26}
)

func hex(c termtest.Color) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// svg draws rows of cells (cols wide) as a terminal window titled "$ title".
func svg(title string, rows [][]termtest.Cell, cols int) string {
	w := pad*2 + float64(cols)*cellW
	h := titleH + pad*2 + float64(len(rows))*cellH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="8" fill="%s"/>`+"\n", hex(defaultBG))
	for i, c := range []string{"#ff5f57", "#febc2e", "#28c840"} {
		fmt.Fprintf(&b, `<circle cx="%.0f" cy="15" r="5.5" fill="%s"/>`+"\n", pad+6+float64(i)*18, c)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="20" fill="#8b90a0" font-family="ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace" font-size="13" text-anchor="middle">$ %s</text>`+"\n",
		w/2, html.EscapeString(title))
	fmt.Fprintf(&b, `<g font-family="ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace" font-size="%d" xml:space="preserve">`+"\n", fontSize)
	for r, row := range rows {
		y := titleH + pad + float64(r)*cellH
		// Backgrounds first, as runs of one colour.
		for c := 0; c < len(row); {
			fg, bg := colors(row[c].Style)
			_ = fg
			e := c + 1
			for e < len(row) && sameBG(row[e].Style, row[c].Style) {
				e++
			}
			if bg != defaultBG {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`+"\n",
					pad+float64(c)*cellW, y, float64(e-c)*cellW, cellH, hex(bg))
			}
			c = e
		}
		// Text, as runs of one style, each placed at its column (no font's advance decides
		// where a column starts).
		for c := 0; c < len(row); {
			e := c + 1
			for e < len(row) && row[e].Style == row[c].Style {
				e++
			}
			text := make([]rune, 0, e-c)
			for _, cell := range row[c:e] {
				text = append(text, cell.R)
			}
			if s := strings.TrimRight(string(text), " "); s != "" {
				fg, _ := colors(row[c].Style)
				attrs := ""
				if row[c].Bold {
					attrs += ` font-weight="bold"`
				}
				if row[c].Faint {
					attrs += ` opacity="0.6"`
				}
				if row[c].Italic {
					attrs += ` font-style="italic"`
				}
				if row[c].Underline {
					attrs += ` text-decoration="underline"`
				}
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s" textLength="%.1f" lengthAdjust="spacingAndGlyphs"%s>%s</text>`+"\n",
					pad+float64(c)*cellW, y+cellH*0.78, hex(fg), float64(len([]rune(s)))*cellW, attrs, html.EscapeString(s))
			}
			c = e
		}
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

// colors are a cell's foreground and background, inverted when SGR 7 says so.
func colors(s termtest.Style) (fg, bg termtest.Color) {
	fg, bg = defaultFG, defaultBG
	if s.FG.Set {
		fg = s.FG
	}
	if s.BG.Set {
		bg = s.BG
	}
	if s.Invert {
		fg, bg = bg, fg
	}
	return fg, bg
}

func sameBG(a, b termtest.Style) bool {
	_, x := colors(a)
	_, y := colors(b)
	return x == y
}
