package format

import (
	"math"
	"testing"
	"time"
)

func TestLatencyAndBytes(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Latency(0.412), "412µs"},
		{Latency(1.234), "1.23ms"},
		{Latency(12.34), "12.3ms"},
		{Latency(123.4), "123ms"},
		{Latency(1234), "1.2s"},
		// cut toward zero as Duration is: never a unit's 1000, never more than measured
		{Latency(0.9996), "999µs"},
		{Latency(0.0004), "<1µs"},
		{Latency(9.996), "9.99ms"},
		{Latency(99.96), "99.9ms"},
		{Latency(999.6), "999ms"},
		{Latency(1999.6), "1.9s"},
		{Latency(1200), "1.2s"},
		{Latency(0), "–"},
		{Latency(math.NaN()), "–"},
		{Bytes(0), "-"},
		{Bytes(512), "~512 B"},
		{Bytes(1536), "~1.5 KiB"},
		{Bytes(5 << 20), "~5.0 MiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestAgo(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{4200 * time.Millisecond, "4.2s ago"},
		{0, "0s ago"},
		{-4200 * time.Millisecond, "4.2s ahead of the server's clock (client clock skew?)"},
		{-90 * time.Second, "1m30s ahead of the server's clock (client clock skew?)"},
	} {
		if got := Ago(c.d); got != c.want {
			t.Errorf("Ago(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestAheadAndDebt: a stored time ahead of the server's clock, and a GCRA debt, read one
// way in every output; a column's short form is the long one's start, never a negative age.
func TestAheadAndDebt(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Ahead(5 * time.Second), "5s ahead of the server's clock (client clock skew?)"},
		{AheadShort(4900 * time.Millisecond), "4.9s ahead"},
		{Age(-4900 * time.Millisecond), "4.9s ahead"},
		{Age(4900 * time.Millisecond), "4.9s"},
		{Age(0), "0s"},
		{Debt(90 * time.Second), "TAT 1m30s past a full window: debt (limit lowered, or the server's clock went back?)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestSeconds: a measured time to the millisecond, cut toward zero as Duration is.
func TestSeconds(t *testing.T) {
	for v, want := range map[float64]string{2.004: "2.004s", 10: "10s", 9.9996: "9.999s", 61.5: "61.5s", 3.019: "3.019s", 0: "0s"} {
		if got := Seconds(v); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestWait: a wait is rounded up to what is shown, so it never reads shorter than it is;
// a time that has passed (Duration) is cut toward zero.
func TestWait(t *testing.T) {
	for _, c := range []struct {
		d         time.Duration
		wait, dur string
	}{
		{9910 * time.Millisecond, "10s", "9.9s"},
		{960*time.Millisecond + 200*time.Microsecond, "961ms", "960ms"},
		{999*time.Microsecond + 600*time.Nanosecond, "1ms", "999µs"},
		{61200 * time.Millisecond, "1m2s", "1m1s"},
		{time.Hour + 30*time.Second, "1h1m", "1h"},
		{3 * time.Second, "3s", "3s"},
		{0, "0s", "0s"},
		{time.Duration(math.MaxInt64), "106751d23h", "106751d23h"},
		{-1, "never: cost exceeds capacity", ""},
	} {
		if c.d < 0 {
			if got := RetryAfter(c.d); got != c.wait {
				t.Errorf("RetryAfter(%v) = %q, want %q", c.d, got, c.wait)
			}
			continue
		}
		if got := Wait(c.d); got != c.wait {
			t.Errorf("Wait(%v) = %q, want %q", c.d, got, c.wait)
		}
		if got := RetryAfter(c.d); got != c.wait {
			t.Errorf("RetryAfter(%v) = %q, want %q", c.d, got, c.wait)
		}
		if got := Duration(c.d); got != c.dur {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.dur)
		}
	}
	if got := Duration(math.MinInt64); got != "-106751d23h" { // its negation overflows
		t.Errorf("Duration(MinInt64) = %q", got)
	}
}
