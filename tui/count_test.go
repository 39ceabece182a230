package tui

import "testing"

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 5003: "5,003", 99999: "99,999",
		100000: "100k", 340499: "340k", 1300000: "1.3M", 1250000000: "1.2G", -5003: "-5,003"} {
		if got := FormatCount(n); got != want {
			t.Errorf("FormatCount(%d) = %q, want %q", n, got, want)
		}
	}
}
