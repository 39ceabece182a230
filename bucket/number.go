package bucket

import (
	"math"
	"strconv"
)

// The one number grammar of stored values (its Lua side is scripts/number.lua num(), used
// by every script that reads a stored number; a table test runs both on the same strings):
// an optional sign, digits, an optional fraction, an optional exponent, at most maxNumberLen
// bytes, and finite. Nothing else: no spaces, hex, inf, nan, underscores, other digits.
//
//	number   = [ "+" | "-" ] ( digits [ "." [ digits ] ] | "." digits ) [ exponent ]
//	exponent = ( "e" | "E" ) [ "+" | "-" ] digits
//
// A value of the grammar's form that overflows a float (1e999) is not a number of the
// grammar either; the readers call such a value in a bucket's field corrupt, not foreign.

// maxNumberLen is the longest stored number: a string or field longer than this is not a
// bucket's number (and a read never transfers it).
const maxNumberLen = 64

// ParseNumber parses a stored number by the one grammar: ok is false for anything else,
// overflow included.
func ParseNumber(s string) (v float64, ok bool) {
	v, form := parseNumberForm(s)
	if !form || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// parseNumberForm checks the grammar's form only: a number that overflows comes back as
// ±Inf with form true, so that a reader can call it corrupt rather than foreign.
func parseNumberForm(s string) (float64, bool) {
	if !numberForm(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return v, true // ±Inf (underflow is no error: it rounds to 0 or a denormal)
		}
		return 0, false
	}
	return v, true
}

// numberForm reports whether s has the grammar's form (see above), byte by byte.
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

// formatNumber writes v so that the grammar reads back exactly v: plain decimal (no
// exponent) where it fits maxNumberLen bytes, as the applications write theirs, and the
// shortest exponent form where it would not (1e-63, 5e-324).
func formatNumber(v float64) string {
	if s := strconv.FormatFloat(v, 'f', -1, 64); len(s) <= maxNumberLen {
		return s
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatWhole writes a whole number in plain digits, also beyond an int64 (math.Floor
// of 10^20 nanoseconds).
func formatWhole(v float64) string {
	if v >= math.MinInt64 && v < math.MaxInt64 {
		return strconv.FormatInt(int64(v), 10)
	}
	return formatNumber(v)
}
