package bucket

import (
	"math"
	"testing"
	"time"
)

const sec = int64(1e6)

// read is a State as Inspect returns it: the stored level read at now, refilled in the
// layout's application model.
func read(layout string, spec Spec, now int64, stored Level, allowed, denied int64) State {
	l := Presets[layout]
	return State{Key: "k", Now: now, Stored: stored, Spec: spec, Layout: l, Exists: true,
		Tokens: l.Level(spec, stored, now).Tokens, Allowed: allowed, Denied: denied}
}

func TestActivitySince(t *testing.T) {
	spec := Spec{Capacity: 100, Rate: 10}
	const t0 = 1_800_000_000 * sec
	for _, c := range []struct {
		name                      string
		prev, cur                 State
		ok, counted               bool
		allowed, denied, consumed float64
	}{
		// 50 + 2 s × 10 = 70 without use; 40 left: 30 used in 2 s, one per allowed decision.
		{"native counters over 2 s", read("native", spec, t0, Level{50, t0}, 10, 2),
			read("native", spec, t0+2*sec, Level{40, t0 + 2*sec}, 40, 12), true, true, 15, 5, 15},
		// Kept full by its refill: the level hides the use, the counters do not.
		{"full bucket: counters win", read("native", spec, t0, Level{99, t0}, 0, 0),
			read("native", spec, t0+sec, Level{99, t0 + sec - 10_000}, 598, 0), true, true, 598, 0, 598},
		{"refill capped at capacity", read("native", spec, t0, Level{100, t0}, 0, 0),
			read("native", spec, t0+sec, Level{95, t0 + sec}, 5, 0), true, true, 5, 0, 5},
		{"idle and full", read("native", spec, t0, Level{100, t0 - sec}, 3, 0),
			read("native", spec, t0+sec, Level{100, t0 - sec}, 3, 0), true, true, 0, 0, 0},
		{"counters reset (bucket deleted)", read("native", spec, t0, Level{10, t0}, 500, 9),
			read("native", spec, t0+sec, Level{96, t0 + sec}, 4, 1), true, true, 4, 1, 0},
		{"other layout: no counters", read("express", spec, t0, Level{50, t0}, 0, 0),
			read("express", spec, t0+sec, Level{55, t0 + sec}, 0, 0), true, false, 0, 0, 5},
		// Stored 5 s ahead of the server by a fast client, untouched: no phantom use,
		// although the level stays put for the 5 s while a refill was expected.
		{"idle, stored time ahead", read("express", spec, t0, Level{20, t0 + 5*sec}, 0, 0),
			read("express", spec, t0+sec, Level{20, t0 + 5*sec}, 0, 0), true, false, 0, 0, 0},
		{"idle webman, ahead (negative refill)", read("webman", spec, t0, Level{20, t0 + 5*sec}, 0, 0),
			read("webman", spec, t0+sec, Level{20, t0 + 5*sec}, 0, 0), true, false, 0, 0, 0},
		// The fast client takes 3 tokens in a second of its clock: 3/s.
		{"fast client taking", read("go-bench", spec, t0+200_000, Level{20, t0 + 5*sec}, 0, 0),
			read("go-bench", spec, t0+sec+200_000, Level{27, t0 + 6*sec}, 0, 0), true, false, 0, 0, 3},
		// Spring refills in whole seconds: read at 100.3 and 101.35 s, one whole second of
		// refill (10) and 15 taken: 15 in 1.05 s, not 15.5 (the continuous refill's 10.5).
		{"spring whole seconds", read("spring", spec, t0+300_000, Level{50, t0}, 0, 0),
			read("spring", spec, t0+sec+350_000, Level{45, t0 + sec}, 0, 0), true, false, 0, 0, 15 / 1.05},
		{"same read twice", read("native", spec, sec, Level{50, sec}, 0, 0), read("native", spec, sec, Level{50, sec}, 0, 0), false, false, 0, 0, 0},
		{"reads out of order", read("native", spec, 2*sec, Level{50, sec}, 0, 0), read("native", spec, sec, Level{50, sec}, 0, 0), false, false, 0, 0, 0},
	} {
		a, ok := c.cur.ActivitySince(c.prev)
		if ok != c.ok || a.Counted != c.counted || !near(a.Allowed, c.allowed) || !near(a.Denied, c.denied) ||
			!near(a.Consumed, c.consumed) {
			t.Errorf("%s: got ok=%v %+v, want ok=%v counted=%v allowed=%v denied=%v consumed=%v",
				c.name, ok, a, c.ok, c.counted, c.allowed, c.denied, c.consumed)
		}
		if ok && a.Interval != time.Duration(c.cur.Now-c.prev.Now)*time.Microsecond {
			t.Errorf("%s: interval %s", c.name, a.Interval)
		}
	}
	other := read("native", spec, sec, Level{1, sec}, 0, 0)
	other.Key = "other"
	if _, ok := other.ActivitySince(read("native", spec, 0, Level{1, 0}, 0, 0)); ok {
		t.Error("activity between two different keys")
	}
	noSpec := read("express", spec, sec, Level{1, 0}, 0, 0)
	noSpec.Spec = Spec{}
	if a, ok := noSpec.ActivitySince(read("express", spec, 0, Level{5, 0}, 0, 0)); !ok || a.ConsumedKnown {
		t.Errorf("unknown spec: %+v %v, want consumption unknown", a, ok)
	}
	gone := read("express", spec, 2*sec, Level{100, 2 * sec}, 0, 0)
	gone.Exists = false
	if a, _ := gone.ActivitySince(read("express", spec, sec, Level{5, sec}, 0, 0)); a.Consumed != 0 {
		t.Errorf("bucket gone: consumed %v, want 0", a.Consumed)
	}
	if r := (Activity{Allowed: 3, Denied: 1}).DenyRatio(); r != 0.25 {
		t.Errorf("deny ratio %v", r)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
