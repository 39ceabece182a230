package format

import (
	"math"
	"strconv"
	"time"
)

// JSON and YAML numbers are rounded here, once, by kind, so runbooks read the same
// precision from every command:
//
//	tokens (tokens, remaining, stored_tokens, tokens_before/after)
//	        cut to 3 decimals toward zero: a thousandth of a token, never more than the
//	        bucket holds, the whole tokens always exact; a negative level (the owning
//	        application's debt) as it is read, to the thousandth
//	durations (*_ms)  milliseconds with 3 decimals (microseconds, Redis TIME's resolution);
//	        retry_after_ms -1 for never (JSONRetryAfter), ttl_ms -1 and -2 as PTTL (JSONTTL)
//	ratios (fill)     cut to 3 decimals toward zero, as Percent floors: 1 only when full
//	measured rates (*_per_s, ops_per_sec, redis_calls_per_request, over_grant_pct)
//	        3 decimals
//	spec values (capacity, rate, cost, arrival_rate)  as configured, float noise dropped
//	        (9 significant digits)
//	durations in seconds (duration_s, burst_every_s)  6 decimals (microseconds)

// JSONTokens rounds a number of tokens for JSON.
func JSONTokens(v float64) float64 { return cut3(v) }

// cut3 cuts v to 3 decimals toward zero.
func cut3(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e12 {
		return JSONFinite(v) // no decimals to cut, and v*1000 could overflow
	}
	return floorTo(v, 3)
}

// JSONMS writes a duration in milliseconds for JSON, to the microsecond.
func JSONMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// JSONRetryAfter writes a retry-after for JSON: milliseconds (JSONMS), and -1 for a
// request that can never pass (a negative wait, see RetryAfter), which JSONMS would
// write as 0, "now".
func JSONRetryAfter(d time.Duration) float64 {
	if d < 0 {
		return -1
	}
	return JSONMS(d)
}

// JSONTTL writes a TTL for JSON as Redis's PTTL does: -1 for no TTL, -2 for no such key,
// milliseconds otherwise.
func JSONTTL(d time.Duration) float64 {
	switch {
	case d == -2:
		return -2
	case d < 0:
		return -1
	}
	return JSONMS(d)
}

// JSONRatio cuts a ratio (fill) to 3 decimals for JSON, toward zero as Percent and
// JSONTokens do: a bucket reads 1 only when it is full (9.996 of 10 is 0.999, shown 99%).
func JSONRatio(v float64) float64 { return cut3(v) }

// JSONRate rounds a measured per-second rate for JSON.
func JSONRate(v float64) float64 { return Round3(v) }

// JSONSpec drops float noise from a configured value (capacity, rate, cost).
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

// JSONFinite keeps JSON encodable whatever a value is: encoding/json refuses NaN and ±Inf
// (the read path reports such stored values as corrupt, so none should get here), which
// become 0 and ±MaxFloat64.
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
