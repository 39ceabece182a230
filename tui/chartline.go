package tui

import (
	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"
)

// drawThinLine is lc.DrawLineWithStyle(f1, f2, runes.ThinLineStyle, s) without
// auto-ranging, with ntcharts' rune tables held in arrays: its package-level maps would
// be built at start-up of every command once the code reading them is linked.
func drawThinLine(lc *linechart.Model, f1, f2 canvas.Float64Point, s lipgloss.Style) {
	p1 := canvas.CanvasPointFromFloat64Point(lc.Origin(), lc.ScaleFloat64PointForLine(f1))
	p2 := canvas.CanvasPointFromFloat64Point(lc.Origin(), lc.ScaleFloat64PointForLine(f2))
	points := graph.GetLinePoints(p1, p2)
	if len(points) < 2 {
		return
	}
	var extraPoints []canvas.Point
	var extraRunes []rune // corner runes of diagonal steps
	dir := make([]runes.LineSegments, len(points))
	for i := 1; i < len(points); i++ {
		p, prev := points[i], points[i-1]
		switch {
		case p.X > prev.X && p.Y > prev.Y: // down right
			dir[i-1].Right, dir[i].Up = true, true
			extraPoints, extraRunes = append(extraPoints, canvas.Point{X: p.X, Y: p.Y - 1}), append(extraRunes, runes.ArcDownLeft)
		case p.X > prev.X && p.Y < prev.Y: // up right
			dir[i-1].Right, dir[i].Down = true, true
			extraPoints, extraRunes = append(extraPoints, canvas.Point{X: p.X, Y: p.Y + 1}), append(extraRunes, runes.ArcUpLeft)
		case p.X > prev.X: // right
			dir[i-1].Right, dir[i].Left = true, true
		case p.X < prev.X && p.Y > prev.Y: // down left
			dir[i-1].Left, dir[i].Up = true, true
			extraPoints, extraRunes = append(extraPoints, canvas.Point{X: p.X, Y: p.Y - 1}), append(extraRunes, runes.ArcDownRight)
		case p.X < prev.X && p.Y < prev.Y: // up left
			dir[i-1].Left, dir[i].Down = true, true
			extraPoints, extraRunes = append(extraPoints, canvas.Point{X: p.X, Y: p.Y + 1}), append(extraRunes, runes.ArcUpRight)
		case p.X < prev.X: // left
			dir[i-1].Left, dir[i].Right = true, true
		case p.Y > prev.Y: // below
			dir[i-1].Down, dir[i].Up = true, true
		case p.Y < prev.Y: // above
			dir[i-1].Up, dir[i].Down = true, true
		}
	}
	for i, l := range dir {
		drawLineRune(&lc.Canvas, points[i], arcLines[segmentMask(l)], s)
	}
	for i, r := range extraRunes {
		drawLineRune(&lc.Canvas, extraPoints[i], r, s)
	}
}

// drawLineRune sets the cell at p to line rune r joined with the line already there, in
// the thin style (ntcharts' graph.DrawLineRune with runes.ThinLineStyle).
func drawLineRune(c *canvas.Model, p canvas.Point, r rune, s lipgloss.Style) {
	if r == runes.Null || !runes.IsLine(r) {
		return
	}
	var l runes.LineSegments
	if old := c.Cell(p).Rune; runes.IsLine(old) {
		runes.SetLineSegments(old, &l)
	}
	runes.SetLineSegments(r, &l)
	c.SetCell(p, canvas.NewCellWithStyle(thinLines[segmentMask(l)], s))
}

// segmentMask indexes the rune tables: up 8, down 4, left 2, right 1.
func segmentMask(l runes.LineSegments) int {
	m := 0
	for i, on := range []bool{l.Right, l.Left, l.Down, l.Up} {
		if on {
			m |= 1 << i
		}
	}
	return m
}

// arcLines and thinLines are ntcharts' runes.ArcLineFromLineSegments and
// ThinLineFromLineSegments, by segmentMask.
var (
	arcLines = [16]rune{runes.Null, runes.LineRight, runes.LineLeft, runes.LineHorizontal,
		runes.LineDown, runes.ArcDownRight, runes.ArcDownLeft, runes.LineHorizontalDown,
		runes.LineUp, runes.ArcUpRight, runes.ArcUpLeft, runes.LineHorizontalUp,
		runes.LineVertical, runes.LineVerticalRight, runes.LineVerticalLeft, runes.LineHorizontalVertical}
	thinLines = [16]rune{runes.Null, runes.LineRight, runes.LineLeft, runes.LineHorizontal,
		runes.LineDown, runes.LineDownRight, runes.LineDownLeft, runes.LineHorizontalDown,
		runes.LineUp, runes.LineUpRight, runes.LineUpLeft, runes.LineHorizontalUp,
		runes.LineVertical, runes.LineVerticalRight, runes.LineVerticalLeft, runes.LineHorizontalVertical}
)
