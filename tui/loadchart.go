package tui

import (
	"math"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"

	"github.com/bucketctl/bucketctl/bucket/load"
)

// ratesChart draws allowed/s (a line) and denied/s (braille) per complete second on a log
// scale in a w×h box; "" when there is no whole second yet or no room.
func ratesChart(st Styles, s load.Snapshot, w, h int) string {
	n := completeSeconds(s)
	if n == 0 || w < 24 || h < 5 {
		return ""
	}
	logv := func(v int64) float64 { return math.Log10(1 + float64(v)) }
	top := 1.0
	for _, p := range s.PerSecond[:n] {
		top = math.Max(top, math.Ceil(logv(max(p.Allowed, p.Denied))))
	}
	span := math.Max(10, float64(n))
	var rowH float64 // the Y value of one row, set once the graph's height is known
	yLabel := func(_ int, v float64) string {
		d := math.Round(v)
		if math.Abs(v-d) > rowH/2+1e-9 {
			return ""
		}
		if d == 0 {
			return "0"
		}
		return FormatAxis(math.Pow(10, d))
	}
	xLabel := func(_ int, v float64) string {
		return FormatDuration(time.Duration(math.Round(v)) * time.Second)
	}
	lc := linechart.New(w, h, 0, span, 0, top,
		linechart.WithXYSteps(max(6, w/6), 1),
		linechart.WithStyles(st.Subtle, st.Subtle, st.Good),
		linechart.WithXLabelFormatter(xLabel),
		linechart.WithYLabelFormatter(yLabel))
	rowH = top / float64(max(1, lc.GraphHeight()))
	lc.DrawXYAxisAndLabel()

	// x of second i is its end; a lone first second is drawn as a point.
	pt := func(i int, v int64) canvas.Float64Point {
		return canvas.Float64Point{X: float64(i + 1), Y: logv(v)}
	}
	g := graph.NewBrailleGrid(lc.GraphWidth(), lc.GraphHeight(), lc.MinX(), lc.MaxX(), lc.MinY(), lc.MaxY())
	prev := g.GridPoint(pt(0, s.PerSecond[0].Denied))
	g.Set(prev)
	for i := 1; i < n; i++ {
		p := g.GridPoint(pt(i, s.PerSecond[i].Denied))
		for _, q := range graph.GetLinePoints(prev, p) {
			g.Set(q)
		}
		prev = p
	}
	graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{X: lc.Origin().X + 1}, g.BraillePatterns(), st.Bad)
	for i := 0; i < n; i++ {
		a := pt(max(0, i-1), s.PerSecond[max(0, i-1)].Allowed)
		lc.DrawLineWithStyle(a, pt(i, s.PerSecond[i].Allowed), runes.ThinLineStyle, st.Good)
	}
	return lc.View()
}

// FormatLatency writes a latency in milliseconds with three significant digits at most:
