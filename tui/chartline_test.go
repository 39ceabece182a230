package tui

import (
	"math/rand/v2"
	"testing"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/NimbleMarkets/ntcharts/linechart"
	"github.com/muesli/termenv"
)

// TestDrawThinLineIsNtchartsLine: drawThinLine draws exactly what ntcharts'
// DrawLineWithStyle draws in the thin style, over axes and over lines already drawn, for
// random runs of segments on charts of several sizes.
func TestDrawThinLineIsNtchartsLine(t *testing.T) {
	st := NewStyles(termenv.Ascii)
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200; n++ {
		w, h := 24+rng.IntN(60), 5+rng.IntN(15)
		top, span := 1+rng.Float64()*5, 10+rng.Float64()*50
		mk := func() linechart.Model {
			lc := linechart.New(w, h, 0, span, 0, top, linechart.WithXYSteps(1, 1), linechart.WithStyles(st.Subtle, st.Subtle, st.Good))
			lc.DrawXYAxisAndLabel()
			return lc
		}
		ours, theirs := mk(), mk()
		prev := canvas.Float64Point{X: 0, Y: rng.Float64() * top}
		for k := 0; k < 1+rng.IntN(12); k++ {
			p := canvas.Float64Point{X: prev.X + rng.Float64()*span/4, Y: rng.Float64() * top}
			if rng.IntN(5) == 0 {
				p.X = prev.X // vertical steps too
			}
			drawThinLine(&ours, prev, p, st.Good)
			theirs.DrawLineWithStyle(prev, p, runes.ThinLineStyle, st.Good)
			prev = p
		}
		if a, b := ours.View(), theirs.View(); a != b {
			t.Fatalf("chart %d (%dx%d): drawThinLine drew\n%s\nntcharts drew\n%s", n, w, h, a, b)
		}
	}
}
