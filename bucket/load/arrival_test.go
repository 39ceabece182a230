package load

import (
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func TestConstantSchedule(t *testing.T) {
	s := newSchedule(Constant, 4, 0, 0, 1)
	for i, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second} {
		if got := s.next(); got != want {
			t.Fatalf("arrival %d at %v, want %v", i, got, want)
		}
	}
}

func TestPoissonScheduleWithBursts(t *testing.T) {
	s := newSchedule(Poisson, 200, time.Second, 50, 7)
	var prev time.Duration
	atOnce := map[time.Duration]int{}
	n := 0
	for {
		at := s.next()
		if at < prev {
			t.Fatalf("arrival %d at %v before the previous one at %v", n, at, prev)
		}
		prev = at
		if at >= 5*time.Second {
			break
		}
		atOnce[at]++
		n++
	}
	// Bursts at 1 s, 2 s, 3 s and 4 s, each 50 requests due at the same instant.
	for _, b := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second} {
		if atOnce[b] != 50 {
			t.Fatalf("burst at %v holds %d arrivals, want 50", b, atOnce[b])
		}
	}
	// The steady stream: 5 s at 200/s is 1000 on average (σ ≈ 32).
	if steady := n - 200; steady < 850 || steady > 1150 {
		t.Fatalf("%d steady arrivals in 5 s at 200/s", steady)
	}
	// The same seed gives the same arrivals.
	a, b := newSchedule(Poisson, 50, 0, 0, 3), newSchedule(Poisson, 50, 0, 0, 3)
	for range 100 {
		if x, y := a.next(), b.next(); x != y {
			t.Fatalf("same seed, different arrivals: %v and %v", x, y)
		}
	}
}

func TestBands(t *testing.T) {
	h := hdr.New(histMin, histMax, histDigits)
	for _, v := range []int64{150, 180, 900, 1500, 1500, 45_000} { // µs
		_ = h.RecordValue(v)
	}
	got := bands(h)
	want := []Band{{0.2, 2}, {0.5, 0}, {1, 1}, {2, 2}, {5, 0}, {10, 0}, {20, 0}, {50, 1}}
	if len(got) != len(want) {
		t.Fatalf("bands %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("band %d: %+v, want %+v (all: %+v)", i, got[i], want[i], got)
		}
	}
	l := latencyOf(h)
	if l.Min != 0.15 || l.Max < 44.9 || l.Max > 45.1 || l.P50 < 0.89 || l.P50 > 0.91 {
		t.Fatalf("latency %+v", l)
	}
}
