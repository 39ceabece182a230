package tui

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
		{"tokens 0", FormatTokens(0), "0"},
		{"tokens half", FormatTokens(0.5), "0.5"},
		{"tokens just under one", FormatTokens(0.996), "0.99"},
		{"tokens a trace", FormatTokens(0.004), "0"},
		{"tokens 9.402", FormatTokens(9.402), "9.4"},
		{"tokens 7.09", FormatTokens(7.09), "7.09"},
		{"tokens float noise of 10", FormatTokens(9.999999999999998), "10"},
		{"tokens 63.25", FormatTokens(63.25), "63.2"},
		{"tokens 99.96", FormatTokens(99.96), "99.9"},
		{"tokens 999.96", FormatTokens(999.96), "999"},
		{"tokens 1000", FormatTokens(1000), "1,000"},
		{"tokens 9289", FormatTokens(9289.7), "9,289"},
		{"tokens 16000", FormatTokens(16000), "16,000"},
		{"tokens 99999.9", FormatTokens(99999.9), "99,999"},
		{"tokens 340k", FormatTokens(340400), "340k"},
		{"tokens 3.1M", FormatTokens(3.1e6), "3.1M"},
		{"tokens negative", FormatTokens(-2.5), "-2.5"},
		{"tokens NaN", FormatTokens(math.NaN()), "?"},
		{"tokens Inf", FormatTokens(math.Inf(1)), "∞"},
		// rates: rounded, small ones keep two significant digits
		{"rate 0", FormatRate(0), "0/s"},
		{"rate slow", FormatRate(0.0017), "6.12/h"},
		{"rate very slow", FormatRate(0.00011), "0.4/h"},
		{"rate 0.01", FormatRate(0.01), "0.01/s"},
		{"per second slow", FormatPerSecond(0.0017), "0.0017"},
		{"rate 1/3", FormatRate(1.0 / 3), "0.33/s"},
		{"rate half", FormatRate(0.5), "0.5/s"},
		{"rate 0.999", FormatRate(0.999), "1/s"},
		{"rate 5", FormatRate(5), "5/s"},
		{"rate 12.34", FormatRate(12.34), "12.3/s"},
		{"rate 99.97", FormatRate(99.97), "100/s"},
		{"rate 1500", FormatRate(1500), "1,500/s"},
		{"rate 250k", FormatRate(250000), "250k/s"},
		{"per second", FormatPerSecond(0.25), "0.25"},
		// counts: exact with separators, compact from 100,000
		{"count 5003", FormatCount(5003), "5,003"},
		{"count 5912", FormatCount(5912), "5,912"},
		{"count 100k", FormatCount(100000), "100k"},
		{"plural one", Plural(1, "bucket"), "1 bucket"},
		{"plural many", Plural(5003, "bucket"), "5,003 buckets"},
		{"plural huge", Plural(340000, "key"), "340k keys"},
		// percentages: whole, floored
		{"percent 0", FormatPercent(0), "0%"},
		{"percent a trace", FormatPercent(0.005), "<1%"},
		{"percent 1", FormatPercent(0.01), "1%"},
		{"percent 14.4", FormatPercent(0.144), "14%"},
		{"percent 6.1", FormatPercent(0.061016765949999996), "6%"},
		{"percent almost full", FormatPercent(0.996), "99%"},
		{"percent full", FormatPercent(1), "100%"},
		{"percent full with noise", FormatPercent(0.9999999999999999), "100%"},
		// durations
		{"dur 0", FormatDuration(0), "0s"},
		{"dur ns", FormatDuration(500), "<1µs"},
		{"dur µs", FormatDuration(50 * time.Microsecond), "50µs"},
		{"dur ms", FormatDuration(850 * time.Millisecond), "850ms"},
		{"dur 3.7s", FormatDuration(3700 * time.Millisecond), "3.7s"},
		{"dur 56.43s", FormatDuration(56430 * time.Millisecond), "56s"},
		{"dur 61s", FormatDuration(61 * time.Second), "1m1s"},
		{"dur 1m4s", FormatDuration(64 * time.Second), "1m4s"},
		{"dur 2h5m", FormatDuration(2*time.Hour + 5*time.Minute), "2h5m"},
		{"dur 1d2h", FormatDuration(26 * time.Hour), "1d2h"},
		{"dur negative", FormatDuration(-1500 * time.Millisecond), "-1.5s"},
		// TTLs and retry-after
		{"ttl none", FormatTTL(-1), "none"},
		{"ttl no key", FormatTTL(-2), "-"},
		{"ttl 56.43s", FormatTTL(56430 * time.Millisecond), "56s"},
		{"ttl 90s", FormatTTL(90 * time.Second), "1m30s"},
		{"retry never", FormatRetryAfter(-1), "never"},
		{"retry 200ms", FormatRetryAfter(200 * time.Millisecond), "200ms"},
		// chart axis ticks
		{"axis 0", FormatAxis(0), "0"},
		{"axis 25", FormatAxis(25), "25"},
		{"axis 1000", FormatAxis(1000), "1k"},
		{"axis 2500", FormatAxis(2500), "2.5k"},
		{"axis 10k", FormatAxis(10000), "10k"},
		{"axis 1.5M", FormatAxis(1.5e6), "1.5M"},
		// digit groups (positions in a list)
		{"group 10000", groupDigits(10000), "10,000"},
		{"group -1234567", groupDigits(-1234567), "-1,234,567"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestShownValuesCompareEqual(t *testing.T) {
	for _, c := range [][3]float64{{25.00001, 25.00002, 25}, {3.4567, 3.4561, 3.45}, {150.2, 150.9, 150}} {
		if a, b := tokensShown(c[0]), tokensShown(c[1]); a != b || a != c[2] {
			t.Errorf("tokensShown: %v and %v, want both %v", a, b, c[2])
		}
		if got, want := FormatTokens(c[0]), FormatTokens(c[2]); got != want {
			t.Errorf("FormatTokens(%v) = %q, want %q", c[0], got, want)
		}
	}
	if a, b := rateShown(3.3333334), rateShown(3.3333331); a != b || a != 3.33 {
		t.Errorf("rateShown: %v and %v, want both 3.33", a, b)
	}
	if a, b := rateShown(1500.2), rateShown(1499.9); a != b || rateShown(-1) != -1 {
		t.Errorf("rateShown: %v and %v, want both 1500; -1 stays -1", a, b)
	}
}
