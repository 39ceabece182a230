package bucket

import (
	"math"
	"testing"
	"time"
)

func TestActivityBetween(t *testing.T) {
	spec := Spec{Capacity: 100, Rate: 10}
	st := func(now int64, tokens float64, allowed, denied int64, native bool) State {
		l := Presets["express"]
		if native {
			l = NativeLayout
		}
		return State{Key: "k", Now: now, Tokens: tokens, Spec: spec, Layout: l, Allowed: allowed, Denied: denied, Exists: true}
	}
	const s = 1_000_000
	for _, c := range []struct {
		name                      string
		prev, cur                 State
		ok, counted               bool
		allowed, denied, consumed float64
	}{
		{"native counters over 2 s", st(0, 50, 10, 2, true), st(2*s, 40, 40, 12, true), true, true, 15, 5, 15},
		{"refill capped at capacity", st(0, 100, 0, 0, true), st(s, 95, 5, 0, true), true, true, 5, 0, 5},
		{"idle and full", st(0, 100, 3, 0, true), st(s, 100, 3, 0, true), true, true, 0, 0, 0},
		{"counters reset (bucket deleted)", st(0, 10, 500, 9, true), st(s, 100, 4, 1, true), true, true, 4, 1, 0},
		{"other layout: no counters", st(0, 50, 0, 0, false), st(s, 55, 0, 0, false), true, false, 0, 0, 5},
		{"same read twice", st(s, 50, 0, 0, true), st(s, 50, 0, 0, true), false, false, 0, 0, 0},
		{"reads out of order", st(2*s, 50, 0, 0, true), st(s, 50, 0, 0, true), false, false, 0, 0, 0},
	} {
		a, ok := ActivityBetween(c.prev, c.cur)
		if ok != c.ok || a.Counted != c.counted || !near(a.Allowed, c.allowed) || !near(a.Denied, c.denied) ||
			!near(a.Consumed, c.consumed) {
			t.Errorf("%s: got ok=%v %+v, want ok=%v counted=%v allowed=%v denied=%v consumed=%v",
				c.name, ok, a, c.ok, c.counted, c.allowed, c.denied, c.consumed)
		}
		if ok && a.Interval != time.Duration(c.cur.Now-c.prev.Now)*time.Microsecond {
			t.Errorf("%s: interval %s", c.name, a.Interval)
		}
	}
	other := st(s, 1, 0, 0, true)
	other.Key = "other"
	if _, ok := ActivityBetween(st(0, 1, 0, 0, true), other); ok {
		t.Error("activity between two different keys")
	}
	noSpec := st(s, 1, 0, 0, false)
	noSpec.Spec = Spec{}
	if a, ok := ActivityBetween(st(0, 5, 0, 0, false), noSpec); !ok || a.ConsumedKnown {
		t.Errorf("unknown spec: %+v %v, want consumption unknown", a, ok)
	}
	if r := (Activity{Allowed: 3, Denied: 1}).DenyRatio(); r != 0.25 {
		t.Errorf("deny ratio %v", r)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
