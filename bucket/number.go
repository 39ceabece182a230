package bucket

import (
	"errors"
	"math"
	"strconv"
)

const maxNumberLen = 64

// ParseNumber parses a stored number by scripts/number.lua's grammar.
func ParseNumber(s string) (v float64, ok bool) {
	v, form := parseNumberForm(s)
	if !form || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// parseNumberForm checks the form only: an overflow is ±Inf with form true.
func parseNumberForm(s string) (float64, bool) {
	if !numberForm(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, true
}

// numberForm reports whether s is [+-](digits[.[digits]] | .digits)[(e|E)[+-]digits].
func numberForm(s string) bool {
	if len(s) == 0 || len(s) > maxNumberLen {
		return false
	}
	i := 0
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - j
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// formatNumber writes v so the grammar reads back exactly v.
func formatNumber(v float64) string {
	if s := strconv.FormatFloat(v, 'f', -1, 64); len(s) <= maxNumberLen {
		return s
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatWhole writes a whole number in plain digits, also beyond an int64.
func formatWhole(v float64) string {
	if v >= math.MinInt64 && v < math.MaxInt64 {
		return strconv.FormatInt(int64(v), 10)
	}
	return formatNumber(v)
}
