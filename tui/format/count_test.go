package format

import (
	"math"
	"testing"
)

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 5003: "5,003", 99999: "99,999",
		100000: "100k", 340499: "340k", 1300000: "1.3M", 1250000000: "1.2G", -5003: "-5,003", math.MinInt64: "-9.2E18"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestFormatHugeNumbers: a corrupt or absurd stored value is shown, never wrapped around an
// int64 (a capacity of 1e308 once sent Count into endless recursion).
func TestFormatHugeNumbers(t *testing.T) {
	for v, want := range map[float64]string{1e308: "1e+308", -1e30: "-1e+30", 1e15: "1e+15", 123456: "123k"} {
		if got := Tokens(v); got != want {
			t.Errorf("Tokens(%v) = %q, want %q", v, got, want)
		}
	}
	if got := PerSecond(1e300); got != "1e+300" {
		t.Errorf("PerSecond(1e300) = %q", got)
	}
}
