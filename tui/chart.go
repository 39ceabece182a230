package tui

import (
	"math"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/linechart"
)

// sample is one read of a bucket's level, at Redis server time (microseconds).
type sample struct {
	at     int64
	tokens float64
}

// minChartSpan is the least history worth a chart; below it the chart says it is collecting.
const minChartSpan = 2 * time.Second

// levelChart draws the token level over the samples' time span as a braille line in a
// w×h box, the newest sample at the right edge, the X axis labelled in time before the
// newest sample (deterministic: no wall clock) and the Y axis from 0 to top.
func levelChart(st Styles, hist []sample, w, h int, top float64) string {
	if w < 20 || h < 4 || len(hist) < 2 {
		return ""
	}
	last := hist[len(hist)-1].at
	span := float64(last-hist[0].at) / 1e6
	if span < minChartSpan.Seconds() {
		return ""
	}
	if top <= 0 || math.IsNaN(top) {
		top = 1
	}
	xLabel := func(_ int, v float64) string {
		if v > -0.5 {
			return "now"
		}
		return "-" + FormatDuration(time.Duration(math.Round(-v))*time.Second)
	}
	yLabel := func(_ int, v float64) string { return FormatTokens(v) }
	lc := linechart.New(w, h, -span, 0, 0, top,
		linechart.WithXYSteps(max(8, w/6), h-2), // Y labels: 0 and the top only
		linechart.WithStyles(st.Subtle, st.Subtle, st.Good),
		linechart.WithXLabelFormatter(xLabel),
		linechart.WithYLabelFormatter(yLabel))
	lc.DrawXYAxisAndLabel()
	g := graph.NewBrailleGrid(lc.GraphWidth(), lc.GraphHeight(), lc.MinX(), lc.MaxX(), lc.MinY(), lc.MaxY())
	point := func(s sample) canvas.Point {
		y := math.Max(0, math.Min(top, s.tokens))
		return g.GridPoint(canvas.Float64Point{X: float64(s.at-last) / 1e6, Y: y})
	}
	prev := point(hist[0])
	for _, s := range hist[1:] {
		p := point(s)
		for _, q := range graph.GetLinePoints(prev, p) {
			g.Set(q)
		}
		prev = p
	}
	graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{X: lc.Origin().X + 1}, g.BraillePatterns(), st.Good)
	return lc.View()
}
