package format

import (
	"math"
	"strconv"
	"time"
)

// JSONTokens cuts a number of tokens to 3 decimals toward zero for JSON.
func JSONTokens(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e12 {
		return JSONFinite(v)
	}
	return floorTo(v, 3)
}

// JSONMS writes a duration in milliseconds for JSON, to the microsecond.
func JSONMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// JSONRetryAfter is JSONMS, or -1 for a request that can never pass (a negative wait).
func JSONRetryAfter(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return JSONMS(d)
}

// JSONTTL writes a TTL for JSON as PTTL does: -1 no TTL, -2 no key, else milliseconds.
func JSONTTL(d time.Duration) float64 {
	switch {
	case d == -2:
		return -2
	case d < 0:
		return -1
	}
	return JSONMS(d)
}

// JSONRatio cuts a ratio (fill) to 3 decimals toward zero for JSON: 1 only when full.
func JSONRatio(v float64) float64 { return JSONTokens(v) }

// JSONRate rounds a measured per-second rate to 3 decimals for JSON.
func JSONRate(v float64) float64 { return Round3(v) }

// JSONSpec drops float noise from a configured value: 9 significant digits.
func JSONSpec(v float64) float64 {
	if !finite(v) {
		return JSONFinite(v)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 9, 64), 64)
	return r
}

// JSONSeconds rounds seconds to the microsecond.
func JSONSeconds(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e9 {
		return JSONFinite(v)
	}
	return math.Round(v*1e6) / 1e6
}

// Round3 rounds to 3 decimals (measured values: ratios, rates, latencies).
func Round3(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e12 {
		return JSONFinite(v)
	}
	return math.Round(v*1000) / 1000
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// JSONFinite keeps a value encodable by encoding/json: NaN is 0, ±Inf ±MaxFloat64.
func JSONFinite(v float64) float64 {
	switch {
	case math.IsNaN(v):
		return 0
	case math.IsInf(v, 1):
		return math.MaxFloat64
	case math.IsInf(v, -1):
		return -math.MaxFloat64
	}
	return v
}
