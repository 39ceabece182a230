package format

import (
	"math"
	"strconv"
)

// countOf is Count of a float; one too large for an int64 has an exponent, never wraps.
func countOf(v float64) string {
	if math.Abs(v) >= 1e15 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return Count(int64(v))
}

// Count writes a count of things (keys, buckets, requests) the same way everywhere:
// exact with thousands separators below 100,000 (5,003), compact above (340k, 1.3M).
func Count(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "-9.2E18" // -n would overflow
		}
		return "-" + Count(-n)
	}
	switch {
	case n >= 1e9:
		return Decimal(float64(n)/1e9, 1) + "G"
	case n >= 1e6:
		return Decimal(float64(n)/1e6, 1) + "M"
	case n >= 1e5:
		return strconv.FormatInt((n+500)/1000, 10) + "k"
	}
	return GroupDigits(n)
}
