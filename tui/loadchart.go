package tui

import (
	"math"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/linechart"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/tui/format"
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
	// The axis spans a duration-bounded run (and what it overran); else 10 s at least.
	span := math.Max(10, float64(n))
	if s.Duration > 0 {
		span = math.Max(math.Ceil(s.Duration.Seconds()), float64(n))
	}
	var rowH float64 // the Y value of one row, set once the graph's height is known
	yLabel := func(_ int, v float64) string {
		d := math.Round(v)
		if math.Abs(v-d) > rowH/2+1e-9 {
			return ""
		}
		if d == 0 {
			return "0"
		}
		return format.Axis(math.Pow(10, d))
	}
	// X labels at round steps, each on the column nearest its time.
	var step, colW float64 // seconds between labels; seconds per column
	xLabel := func(i int, _ float64) string {
		t := math.Round(float64(i)*colW/step) * step
		if t > span || int(math.Round(t/colW)) != i {
			return ""
		}
		return format.Duration(time.Duration(t) * time.Second)
	}
	lc := linechart.New(w, h, 0, span, 0, top,
		linechart.WithXYSteps(1, 1),
		linechart.WithStyles(st.Subtle, st.Subtle, st.Good),
		linechart.WithXLabelFormatter(xLabel),
		linechart.WithYLabelFormatter(yLabel))
	rowH = top / float64(max(1, lc.GraphHeight()))
	colW = span / float64(max(1, lc.GraphWidth()))
	step = timeStep(span, lc.GraphWidth())
	lc.DrawXYAxisAndLabel()

	pt := func(i int, v int64) canvas.Float64Point {
		return canvas.Float64Point{X: float64(i + 1), Y: logv(v)}
	}
	denied := make([]canvas.Float64Point, n)
	for i := range denied {
		denied[i] = pt(i, s.PerSecond[i].Denied)
	}
	brailleLine(&lc, denied, nil, st.Bad)
	for i := 0; i < n; i++ {
		a := pt(max(0, i-1), s.PerSecond[max(0, i-1)].Allowed)
		drawThinLine(&lc, a, pt(i, s.PerSecond[i].Allowed), st.Good)
	}
	return lc.View()
}

// timeStep is the smallest round step in seconds (labelSteps, then doubling) between the
// labels of an axis of span seconds over cols columns that leaves each label room.
func timeStep(span float64, cols int) float64 {
	fits := func(s float64) bool {
		room := s * float64(cols) / span
		for t := 0.0; t <= span; t += s {
			if float64(len(format.Duration(time.Duration(t)*time.Second))+3) > room {
				return false
			}
		}
		return true
	}
	for _, s := range labelSteps {
		if fits(s.Seconds()) {
			return s.Seconds()
		}
	}
	s := 7200.0
	for !fits(s) {
		s *= 2
	}
	return s
}
