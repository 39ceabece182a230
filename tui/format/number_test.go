package format

import (
	"math"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestTruncMiddle(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"rl:{tenant-4711}:route:/api/v1/orders", 40, "rl:{tenant-4711}:route:/api/v1/orders"},
		{"rl:{tenant-4711}:route:/api/v1/orders", 26, "rl:{tenant-4…api/v1/orders"},
		{"rl:{tenant-4711}:route:/api/v1/users", 26, "rl:{tenant-4…/api/v1/users"},
		{"日本語のキー:末尾", 9, "日本…末尾"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	} {
		got := TruncMiddle(c.in, c.w)
		if got != c.want {
			t.Errorf("TruncMiddle(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if w := ansi.StringWidth(got); w > c.w {
			t.Errorf("TruncMiddle(%q, %d) is %d cells wide", c.in, c.w, w)
		}
	}
}

// TestFormatters pins one rule per kind of value: the strings every cmd table and tui view
// print for the same number.
func TestFormatters(t *testing.T) {
	for _, c := range []struct {
		name, got, want string
	}{
		// tokens: floored to what is shown (never more than the bucket holds)
		{"tokens 0", Tokens(0), "0"},
		{"tokens half", Tokens(0.5), "0.5"},
		{"tokens just under one", Tokens(0.996), "0.99"},
		{"tokens a trace", Tokens(0.004), "0"},
		{"tokens 9.402", Tokens(9.402), "9.4"},
		{"tokens 7.09", Tokens(7.09), "7.09"},
		{"tokens float noise of 10", Tokens(9.999999999999998), "10"},
		{"tokens 63.25", Tokens(63.25), "63.2"},
		{"tokens 99.96", Tokens(99.96), "99.9"},
		{"tokens 999.96", Tokens(999.96), "999"},
		{"tokens 1000", Tokens(1000), "1,000"},
		{"tokens 9289", Tokens(9289.7), "9,289"},
		{"tokens 16000", Tokens(16000), "16,000"},
		{"tokens 99999.9", Tokens(99999.9), "99,999"},
		{"tokens 340k", Tokens(340400), "340k"},
		{"tokens 3.1M", Tokens(3.1e6), "3.1M"},
		{"tokens negative", Tokens(-2.5), "-2.5"},
		// a debt is cut toward zero: float noise never adds a hundredth to it
		{"tokens debt with noise", Tokens(-2.2000000238), "-2.2"},
		{"tokens debt 0.456", Tokens(-0.456), "-0.45"},
		{"tokens debt a trace", Tokens(-0.004), "0"},
		{"tokens debt 150.7", Tokens(-150.7), "-150"},
		{"tokens NaN", Tokens(math.NaN()), "?"},
		{"tokens Inf", Tokens(math.Inf(1)), "∞"},
		// rates: rounded, small ones keep two significant digits
		{"rate 0", Rate(0), "0/s"},
		{"rate slow", Rate(0.0017), "6.12/h"},
		{"rate very slow", Rate(0.00011), "0.4/h"},
		{"rate 0.01", Rate(0.01), "0.01/s"},
		{"per second slow", PerSecond(0.0017), "0.0017"},
		{"rate 1/3", Rate(1.0 / 3), "0.33/s"},
		{"rate half", Rate(0.5), "0.5/s"},
		{"rate 0.999", Rate(0.999), "1/s"},
		{"rate 5", Rate(5), "5/s"},
		{"rate 12.34", Rate(12.34), "12.3/s"},
		{"rate 99.97", Rate(99.97), "100/s"},
		{"rate 1500", Rate(1500), "1,500/s"},
		{"rate 250k", Rate(250000), "250k/s"},
		{"per second", PerSecond(0.25), "0.25"},
		// counts: exact with separators, compact from 100,000
		{"count 5003", Count(5003), "5,003"},
		{"count 5912", Count(5912), "5,912"},
		{"count 100k", Count(100000), "100k"},
		{"plural one", Plural(1, "bucket"), "1 bucket"},
		{"plural many", Plural(5003, "bucket"), "5,003 buckets"},
		{"plural huge", Plural(340000, "key"), "340k keys"},
		{"plural int64", Plural(int64(1), "key"), "1 key"},
		{"plural int64 many", Plural(int64(5003), "bucket"), "5,003 buckets"},
		// percentages: whole, floored
		{"percent 0", Percent(0), "0%"},
		{"percent a trace", Percent(0.005), "<1%"},
		{"percent 1", Percent(0.01), "1%"},
		{"percent 14.4", Percent(0.144), "14%"},
		{"percent 6.1", Percent(0.061016765949999996), "6%"},
		{"percent almost full", Percent(0.996), "99%"},
		{"percent full", Percent(1), "100%"},
		{"percent full with noise", Percent(0.9999999999999999), "100%"},
		// durations
		{"dur 0", Duration(0), "0s"},
		{"dur ns", Duration(500), "<1µs"},
		{"dur µs", Duration(50 * time.Microsecond), "50µs"},
		{"dur ms", Duration(850 * time.Millisecond), "850ms"},
		{"dur 3.7s", Duration(3700 * time.Millisecond), "3.7s"},
		{"dur 9.96s cut, not rounded up", Duration(9960 * time.Millisecond), "9.9s"},
		{"dur 10.9s cut", Duration(10900 * time.Millisecond), "10s"},
		{"dur 999.6µs cut", Duration(999600 * time.Nanosecond), "999µs"},
		{"dur 1.99s cut", Duration(1999 * time.Millisecond), "1.9s"},
		{"dur 56.43s", Duration(56430 * time.Millisecond), "56s"},
		{"dur 61s", Duration(61 * time.Second), "1m1s"},
		{"dur 1m4s", Duration(64 * time.Second), "1m4s"},
		{"dur 2h5m", Duration(2*time.Hour + 5*time.Minute), "2h5m"},
		{"dur 1d2h", Duration(26 * time.Hour), "1d2h"},
		{"dur negative", Duration(-1500 * time.Millisecond), "-1.5s"},
		// TTLs and retry-after
		{"ttl none", TTL(-1), "none"},
		{"ttl no key", TTL(-2), "-"},
		{"ttl 56.43s", TTL(56430 * time.Millisecond), "57s"}, // a wait: rounded up,
		{"ttl 90s", TTL(90 * time.Second), "1m30s"},
		{"retry never", RetryAfter(-1), "never: cost exceeds capacity"},
		{"retry 200ms", RetryAfter(200 * time.Millisecond), "200ms"},
		// chart axis ticks
		{"axis 0", Axis(0), "0"},
		{"axis 25", Axis(25), "25"},
		{"axis 1000", Axis(1000), "1k"},
		{"axis 2500", Axis(2500), "2.5k"},
		{"axis 10k", Axis(10000), "10k"},
		{"axis 1.5M", Axis(1.5e6), "1.5M"},
		// digit groups (positions in a list)
		{"group 10000", GroupDigits(10000), "10,000"},
		{"group -1234567", GroupDigits(-1234567), "-1,234,567"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestShownValuesCompareEqual(t *testing.T) {
	for _, c := range []struct {
		a, b, shown float64
		text        string
	}{{25.00001, 25.00002, 25, "25"}, {3.4567, 3.4561, 3.45, "3.45"}, {150.2, 150.9, 150, "150"}} {
		if a, b := TokensShown(c.a), TokensShown(c.b); a != b || a != c.shown {
			t.Errorf("TokensShown: %v and %v, want both %v", a, b, c.shown)
		}
		if got := Tokens(c.a); got != c.text {
			t.Errorf("Tokens(%v) = %q, want %q", c.a, got, c.text)
		}
	}
	if a, b := RateShown(3.3333334), RateShown(3.3333331); a != b || a != 3.33 {
		t.Errorf("RateShown: %v and %v, want both 3.33", a, b)
	}
	if a, b := RateShown(1500.2), RateShown(1499.9); a != b || RateShown(-1) != -1 {
		t.Errorf("RateShown: %v and %v, want both 1500; -1 stays -1", a, b)
	}
}

// TestExactAndFixed: a flag's argument reads back as the same float; a report's figures keep
// their decimals.
func TestExactAndFixed(t *testing.T) {
	for v, want := range map[float64]string{2.5: "2.5", 100: "100", 1e15: "1e+15", 0.1: "0.1", 1.0 / 3: "0.3333333333333333"} {
		if got := Exact(v); got != want {
			t.Errorf("Exact(%v) = %q, want %q", v, got, want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{1, "1.00"}, {12.5, "12.50"}, {0.005, "0.01"}, {math.Inf(1), "∞"}, {math.NaN(), "?"}} {
		if got := Fixed(c.v, 2); got != c.want {
			t.Errorf("Fixed(%v, 2) = %q, want %q", c.v, got, c.want)
		}
	}
}
