package tui

import (
	"cmp"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"
)

// The segments of a line rune, as bits indexing thinLines.
const (
	segRight = 1 << iota
	segLeft
	segDown
	segUp
)

// drawThinLine is lc.DrawLineWithStyle(f1, f2, runes.ThinLineStyle, s) without
// auto-ranging, and without ntcharts' rune maps, which would be built at every start-up.
func drawThinLine(lc *linechart.Model, f1, f2 canvas.Float64Point, s lipgloss.Style) {
	p1 := canvas.CanvasPointFromFloat64Point(lc.Origin(), lc.ScaleFloat64PointForLine(f1))
	p2 := canvas.CanvasPointFromFloat64Point(lc.Origin(), lc.ScaleFloat64PointForLine(f2))
	points := graph.GetLinePoints(p1, p2)
	if len(points) < 2 {
		return
	}
	type corner struct {
		at   canvas.Point
		segs int
	}
	var corners []corner
	segs := make([]int, len(points))
	for i := 1; i < len(points); i++ {
		p := points[i]
		dx, dy := cmp.Compare(p.X, points[i-1].X), cmp.Compare(p.Y, points[i-1].Y)
		x, y := toward(dx, segRight, segLeft), toward(dy, segDown, segUp)     // from the point before
		bx, by := toward(-dx, segRight, segLeft), toward(-dy, segDown, segUp) // back to it
		switch {
		case dx != 0 && dy != 0: // diagonal: out sideways, in vertically, a corner beside p
			segs[i-1], segs[i] = segs[i-1]|x, segs[i]|by
			corners = append(corners, corner{canvas.Point{X: p.X, Y: p.Y - dy}, y | bx})
		case dx != 0:
			segs[i-1], segs[i] = segs[i-1]|x, segs[i]|bx
		default:
			segs[i-1], segs[i] = segs[i-1]|y, segs[i]|by
		}
	}
	for i, m := range segs {
		joinLine(&lc.Canvas, points[i], m, s)
	}
	for _, c := range corners {
		joinLine(&lc.Canvas, c.at, c.segs, s)
	}
}

func toward(d, pos, neg int) int {
	switch {
	case d > 0:
		return pos
	case d < 0:
		return neg
	}
	return 0
}

// joinLine draws the segments segs at p, joined with the line already there.
func joinLine(c *canvas.Model, p canvas.Point, segs int, s lipgloss.Style) {
	if segs == 0 {
		return
	}
	var l runes.LineSegments
	if old := c.Cell(p).Rune; runes.IsLine(old) {
		runes.SetLineSegments(old, &l)
	}
	for i, on := range []bool{l.Right, l.Left, l.Down, l.Up} {
		if on {
			segs |= 1 << i
		}
	}
	c.SetCell(p, canvas.NewCellWithStyle(thinLines[segs], s))
}

// thinLines is ntcharts' runes.ThinLineFromLineSegments by segment bits.
var thinLines = [16]rune{runes.Null, runes.LineRight, runes.LineLeft, runes.LineHorizontal,
	runes.LineDown, runes.LineDownRight, runes.LineDownLeft, runes.LineHorizontalDown,
	runes.LineUp, runes.LineUpRight, runes.LineUpLeft, runes.LineHorizontalUp,
	runes.LineVertical, runes.LineVerticalRight, runes.LineVerticalLeft, runes.LineHorizontalVertical}
