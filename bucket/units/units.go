package units

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Examples of valid values, for error messages.
const (
	rateExample     = "5, 5/s, 300/m or 0.5/h"
	DurationExample = "3s, 500ms or 1m30s"
	AmountExample   = "10, 2.5, 1,000, 10k or 1e6"
)

// ParseAmount reads a number of tokens or requests: 10, 2.5, 1,000, 1e6, and the counts
// the views print with a suffix (340k, 1.2M).
func ParseAmount(s string) (float64, error) {
	v, ok := parseNumber(strings.TrimSpace(s))
	if !ok {
		return 0, errors.New("not a number; write it as " + AmountExample)
	}
	return v, nil
}

// rateUnit is the length in seconds of a unit a rate may name after its slash (0: none).
func rateUnit(u string) float64 {
	switch strings.ToLower(u) {
	case "s", "sec", "second":
		return 1
	case "m", "min", "minute":
		return 60
	case "h", "hr", "hour":
		return 3600
	case "d", "day":
		return 86400
	}
	return 0
}

// ParseRate reads a rate in tokens per second: a bare number is per second (5), or a
// number per unit (5/s, 300/m, 300/min, 0.5/h, 0.5/hour, 1,500/s, 10k/d).
func ParseRate(s string) (float64, error) {
	num, unit, per := strings.Cut(strings.TrimSpace(s), "/")
	v, ok := parseNumber(strings.TrimSpace(num))
	if !ok {
		return 0, errors.New("not a rate; write it as " + rateExample)
	}
	if !per {
		return v, nil
	}
	sec := rateUnit(strings.TrimSpace(unit))
	if sec == 0 {
		return 0, errors.New("unknown unit /" + strings.TrimSpace(unit) + "; write it as " + rateExample)
	}
	return v / sec, nil
}

// ParseDuration reads a duration with its unit (3s, 500ms, 1m30s, 2h), as the views print
// them. A bare number is refused, saying how to write it, except 0; unitIfBare is the
// unit a bare number is read in where the name of the value says it (a field in _ms),
// 0 elsewhere.
func ParseDuration(s string, unitIfBare time.Duration) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if v, ok := parseNumber(s); ok {
		switch {
		case unitIfBare > 0:
			d := v * float64(unitIfBare)
			if math.Abs(d) > math.MaxInt64 {
				return 0, errors.New("too long; write it as " + DurationExample)
			}
			return time.Duration(d), nil
		case v == 0:
			return 0, nil
		}
		return 0, errors.New("a duration needs a unit; write it as " + s + "s")
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		return 0, errors.New("not a duration; write it as " + DurationExample)
	}
	return d, nil
}

// parseNumber reads a number as people type it: the one number grammar (bucket.ParseNumber),
// with optional thousands separators (1,500) and a k/M/G suffix (340k), as the views print
// counts.
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult, s = 1e3, s[:len(s)-1]
	case 'M':
		mult, s = 1e6, s[:len(s)-1]
	case 'G':
		mult, s = 1e9, s[:len(s)-1]
	}
	if strings.Contains(s, ",") {
		whole, frac, hasFrac := strings.Cut(s, ".")
		groups := strings.Split(strings.TrimLeft(whole, "+-"), ",")
		for i, g := range groups {
			if (i == 0 && (len(g) < 1 || len(g) > 3)) || (i > 0 && len(g) != 3) {
				return 0, false
			}
		}
		s = strings.ReplaceAll(whole, ",", "")
		if hasFrac {
			s += "." + frac
		}
	}
	v, ok := bucket.ParseNumber(s)
	if !ok || math.IsInf(v*mult, 0) {
		return 0, false
	}
	return v * mult, true
}
