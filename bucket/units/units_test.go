package units

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{
		"5": 5, "5/s": 5, "300/m": 5, "300/min": 5, "0.5/h": 0.5 / 3600, "0.5/hour": 0.5 / 3600,
		"1,500/s": 1500, "10k/s": 10000, "1e6": 1e6, "2/sec": 2, "86400/d": 1, "0.4/h": 0.4 / 3600,
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"abc", "", "5/x", "5/", "/s", "0x10", "Inf", "NaN", "1,50/s", "5 per s", "1e400",
		" 2 / sec ", "5 /s", "5/ s", "0100/s", "1e-400/s"} {
		_, err := ParseRate(in)
		if err == nil {
			t.Errorf("ParseRate(%q) accepted", in)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "5/s") || strings.Contains(msg, "strconv") {
			t.Errorf("ParseRate(%q): %q has no example or quotes Go", in, msg)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3s": 3 * time.Second, "500ms": 500 * time.Millisecond, "1m30s": 90 * time.Second, "0": 0, "2h": 2 * time.Hour,
	} {
		if got, err := ParseDuration(in, 0); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if got, err := ParseDuration("8760h", 0); err != nil || got != MaxDuration {
		t.Errorf("a year: %v, %v", got, err)
	}
	if got, err := ParseDuration("250", time.Millisecond); err != nil || got != 250*time.Millisecond {
		t.Errorf("a bare number in ms: %v, %v", got, err)
	}
	if _, err := ParseDuration("3", 0); err == nil || !strings.Contains(err.Error(), "write it as 3s") {
		t.Errorf("a bare 3: %v; want it to say 3s", err)
	}
	for _, in := range []string{"abc", "3x", "", "s", "5 s", " 3s", "3s\t", "8761h", "2562047h", "9999999999h", "-8761h"} {
		if _, err := ParseDuration(in, 0); err == nil || strings.Contains(err.Error(), "time:") || !strings.Contains(err.Error(), "500ms") {
			t.Errorf("ParseDuration(%q): %v", in, err)
		}
	}
}

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]float64{"10": 10, "2.5": 2.5, "1,000": 1000, "10k": 1e4, "1.2M": 1.2e6, "1e6": 1e6, "-1": -1,
		"0": 0, "0.5": 0.5, "0e5": 0, "1e-300": 1e-300, "0.000": 0} {
		if got, err := ParseAmount(in); err != nil || got != want {
			t.Errorf("ParseAmount(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	long := "0." + strings.Repeat("0", 62) + "1"
	for in, why := range map[string]string{"ten": "not a number", "": "not a number", "1_000": "not a number", "0x10": "not a number",
		"1,0000": "not a number", "NaN": "not a number", "0100": "a leading zero", "-0100": "a leading zero", "00.5": "a leading zero",
		"1 ": "a space", " 1": "a space", "1\t": "a space", "1 000": "a space", "1e-400": "too small", "1e400": "too large",
		long: "longer than 64 characters"} {
		_, err := ParseAmount(in)
		if err == nil || !strings.HasPrefix(err.Error(), why) || !strings.Contains(err.Error(), "write it as") {
			t.Errorf("ParseAmount(%q): %v, want %q", in, err, why)
		}
	}
}

func TestParseWhole(t *testing.T) {
	for in, want := range map[string]int64{"10": 10, "0": 0, "1,000": 1000, "10k": 1e4, "-1": -1, "1e3": 1000} {
		if got, err := ParseWhole(in); err != nil || got != want {
			t.Errorf("ParseWhole(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0100", "0x10", "1_0", "1 ", "2.5", "1e300", "many", "010"} {
		if _, err := ParseWhole(in); err == nil || !strings.Contains(err.Error(), "write it as 10") {
			t.Errorf("ParseWhole(%q): %v", in, err)
		}
	}
}
