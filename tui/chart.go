package tui

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/charmbracelet/lipgloss"

	"github.com/bucketctl/bucketctl/tui/format"
)

// sample is one read of a bucket's level, at Redis server time (microseconds).
type sample struct {
	at     int64
	tokens float64
}

// minChartSpan is the least history worth a chart; below it the chart says it is collecting.
const minChartSpan = 2 * time.Second

// levelChart draws the token level as a braille line in a w×h box: X ends at now (Redis
// server time), labelled at round steps (-30s -20s -10s now); Y runs from 0 to top.
func levelChart(st Styles, hist []sample, now int64, w, h int, top float64) string {
	if w < 20 || h < 4 || len(hist) < 2 {
		return ""
	}
	now = max(now, hist[len(hist)-1].at)
	span := float64(now-hist[0].at) / 1e6
	if float64(hist[len(hist)-1].at-hist[0].at)/1e6 < minChartSpan.Seconds() {
		return ""
	}
	if top <= 0 || math.IsNaN(top) {
		top = 1
	}
	lc := linechart.New(w, h, -span, 0, 0, top,
		linechart.WithXYSteps(1, h-2), // Y labels: 0 and the top only; X labels drawn below
		linechart.WithStyles(st.Subtle, st.Subtle, st.Good),
		linechart.WithXLabelFormatter(func(int, float64) string { return "" }),
		linechart.WithYLabelFormatter(func(_ int, v float64) string { return format.Axis(v) }))
	lc.DrawXYAxisAndLabel()
	pts := make([]canvas.Float64Point, len(hist))
	for i, s := range hist {
		pts[i] = canvas.Float64Point{X: float64(s.at-now) / 1e6, Y: math.Max(0, math.Min(top, s.tokens))}
	}
	gap := gapLimit(hist)
	brailleLine(&lc, pts, func(i int) bool { return hist[i].at-hist[i-1].at > gap }, st.Good)
	lines := strings.Split(lc.View(), "\n")
	lines[len(lines)-1] = st.Subtle.Render(xAxisLabels(span, lc.Origin().X+1, lc.GraphWidth(), w))
	return strings.Join(lines, "\n")
}

// brailleLine draws pts as a braille line on lc, broken before each point where gap(i).
func brailleLine(lc *linechart.Model, pts []canvas.Float64Point, gap func(i int) bool, sty lipgloss.Style) {
	g := graph.NewBrailleGrid(lc.GraphWidth(), lc.GraphHeight(), lc.MinX(), lc.MaxX(), lc.MinY(), lc.MaxY())
	var prev canvas.Point
	for i, f := range pts {
		p := g.GridPoint(f)
		if i == 0 || gap != nil && gap(i) {
			g.Set(p)
		} else {
			for _, q := range graph.GetLinePoints(prev, p) {
				g.Set(q)
			}
		}
		prev = p
	}
	graph.DrawBraillePatterns(&lc.Canvas, canvas.Point{X: lc.Origin().X + 1}, g.BraillePatterns(), sty)
}

// gapLimit is the time between two reads (µs) beyond which the chart leaves a gap: three
// times their median spacing, so one lost read still joins its neighbours.
func gapLimit(hist []sample) int64 {
	d := make([]int64, 0, len(hist)-1)
	for i := 1; i < len(hist); i++ {
		d = append(d, hist[i].at-hist[i-1].at)
	}
	slices.Sort(d)
	return 3 * d[len(d)/2]
}

var labelSteps = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour}

// xAxisLabels labels a time axis of span seconds ending at "now", at a round step that fits.
func xAxisLabels(span float64, x0, graphW, w int) string {
	row := []rune(strings.Repeat(" ", w))
	col := func(sec float64) int { // seconds before now → column
		return x0 + int(math.Round((span-sec)/span*float64(graphW-1)))
	}
	const widest = 6 // "-1m30s" needs no more, and 15 s steps are labelled in whole forms
	step := labelSteps[len(labelSteps)-1]
	for _, s := range labelSteps {
		if span > 0 && s.Seconds()/span*float64(graphW) >= widest+2 {
			step = s
			break
		}
	}
	put := func(c int, s string) {
		for i, r := range []rune(s) {
			if c+i >= 0 && c+i < w {
				row[c+i] = r
			}
		}
	}
	nowAt := x0 + graphW - 3
	put(nowAt, "now")
	free := nowAt - 1 // labels go right to left, each ending before this column
	for k := 1; step.Seconds()*float64(k) <= span; k++ {
		label := "-" + format.Duration(step*time.Duration(k))
		n := len([]rune(label))
		c := max(x0, col(step.Seconds()*float64(k))-n/2)
		if c+n > free {
			continue
		}
		put(c, label)
		free = c - 1
	}
	return strings.TrimRight(string(row), " ")
}
