package units

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/bucketctl/bucketctl/bucket"
)

// Examples of valid values, for error messages.
const (
	rateExample     = "5, 5/s, 300/m or 0.5/h"
	DurationExample = "3s, 500ms or 1m30s"
	AmountExample   = "10, 2.5, 1,000, 10k or 1e6"
	WholeExample    = "10, 1,000 or 10k"
	MaxDuration     = 365 * 24 * time.Hour // the longest duration a user may type
)

// ParseAmount reads a number of tokens or requests: 10, 2.5, 1,000, 1e6, 340k, 1.2M.
func ParseAmount(s string) (float64, error) {
	v, why := parseNumber(s)
	if why != "" {
		return 0, errors.New(why + "; write it as " + AmountExample)
	}
	return v, nil
}

// ParseWhole reads a whole number as ParseAmount does, up to 2^53.
func ParseWhole(s string) (int64, error) {
	v, why := parseNumber(s)
	switch {
	case why != "" && why != notNumber:
		return 0, errors.New(why + "; write it as " + WholeExample)
	case why != "", v != math.Trunc(v) || math.Abs(v) > 1<<53:
		return 0, errors.New("not a whole number; write it as " + WholeExample)
	}
	return int64(v), nil
}

var rateUnits = map[string]float64{"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60,
	"h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400}

// ParseRate reads a rate in tokens per second: 5, 5/s, 300/m, 300/min, 0.5/hour, 10k/d.
func ParseRate(s string) (float64, error) {
	num, unit, per := strings.Cut(s, "/")
	v, why := parseNumber(num)
	if why != "" {
		if why == notNumber {
			why = "not a rate"
		}
		return 0, errors.New(why + "; write it as " + rateExample)
	}
	if !per {
		return v, nil
	}
	sec := rateUnits[strings.ToLower(unit)]
	if sec == 0 {
		return 0, errors.New("unknown unit /" + unit + "; write it as " + rateExample)
	}
	return v / sec, nil
}

var errOverYear = errors.New("over a year (8760h); write it as " + DurationExample)

// ParseDuration reads a duration with its unit (3s, 500ms, 1m30s), up to MaxDuration; a bare
// number other than 0 needs unitIfBare > 0 (a field in _ms).
func ParseDuration(s string, unitIfBare time.Duration) (time.Duration, error) {
	if v, why := parseNumber(s); why == "" {
		switch {
		case unitIfBare > 0:
			d := v * float64(unitIfBare)
			if math.Abs(d) > float64(MaxDuration) {
				return 0, errOverYear
			}
			return time.Duration(d), nil
		case v == 0:
			return 0, nil
		}
		return 0, errors.New("a duration needs a unit; write it as " + s + "s")
	}
	if strings.ContainsFunc(s, unicode.IsSpace) {
		return 0, errors.New("a space in a duration; write it as " + DurationExample)
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && strings.Contains(err.Error(), "invalid duration") && s != "" && strings.Trim(s, "0123456789.+-nsuµmh") == "":
		return 0, errOverYear
	case err != nil:
		return 0, errors.New("not a duration; write it as " + DurationExample)
	case d > MaxDuration || d < -MaxDuration:
		return 0, errOverYear
	}
	return d, nil
}

const notNumber = "not a number" // parseNumber's reason for what is no number at all

// parseNumber reads bucket.ParseNumber's grammar with separators (1,500) and k/M/G, or says why not.
func parseNumber(s string) (float64, string) {
	switch {
	case s == "":
		return 0, notNumber
	case strings.ContainsFunc(s, unicode.IsSpace):
		return 0, "a space in a number"
	case len(s) > maxLen:
		return 0, "longer than 64 characters"
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
				return 0, notNumber
			}
		}
		s = strings.ReplaceAll(whole, ",", "")
		if hasFrac {
			s += "." + frac
		}
	}
	v, ok := bucket.ParseNumber(s)
	digits := strings.TrimLeft(s, "+-")
	switch {
	case !ok && overflows(s), ok && math.IsInf(v*mult, 0):
		return 0, "too large"
	case !ok:
		return 0, notNumber
	case len(digits) > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9':
		return 0, "a leading zero (other tools read 0100 as octal)"
	case v == 0 && strings.Trim(mantissa(digits), "0.") != "":
		return 0, "too small: it rounds to 0"
	}
	return v * mult, ""
}

const maxLen = 64 // the longest number a user may type: the stored numbers' limit

func mantissa(s string) string {
	m, _, _ := strings.Cut(strings.ReplaceAll(s, "E", "e"), "e")
	return m
}

func overflows(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) && strings.Trim(s, "0123456789.eE+-") == ""
}
