package cmd

import (
	"math"
	"strconv"
	"time"

	"github.com/bucketctl/bucketctl/bucket/load"
)

// JSON and YAML numbers are rounded here, once, by kind, so runbooks read the same
// precision from every command:
//
//	tokens (tokens, remaining, stored_tokens, tokens_before/after)
//	        floored to 3 decimals: a thousandth of a token, never more than the bucket
//	        holds, the whole tokens always exact
//	durations (*_ms)  milliseconds with 3 decimals (microseconds, Redis TIME's resolution)
//	ratios (fill)     3 decimals
//	measured rates (*_per_s, ops_per_sec, redis_calls_per_request, over_grant_pct)
//	        3 decimals
//	spec values (capacity, rate, cost, arrival_rate)  as configured, float noise dropped
//	        (9 significant digits)
//	durations in seconds (duration_s, burst_every_s)  6 decimals (microseconds)

// jsonNoise absorbs float arithmetic's last-bit error before a floor (9.999999999999998 is 10).
const jsonNoise = 1e-6

// jsonTokens rounds a number of tokens for JSON.
func jsonTokens(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e12 {
		return jsonFinite(v) // no decimals to cut, and v*1000 could overflow
	}
	return math.Floor(v*1000+jsonNoise) / 1000
}

// ms writes a duration in milliseconds for JSON, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ttlMS writes a TTL for JSON as Redis's PTTL does: -1 for no TTL, -2 for no such key,
// milliseconds otherwise.
func ttlMS(d time.Duration) float64 {
	switch {
	case d == -2:
		return -2
	case d < 0:
		return -1
	}
	return ms(d)
}

// jsonRatio rounds a ratio (fill) for JSON.
func jsonRatio(v float64) float64 { return round3(v) }

// jsonRate rounds a measured per-second rate for JSON.
func jsonRate(v float64) float64 { return round3(v) }

// jsonSpec drops float noise from a configured value (capacity, rate, cost).
func jsonSpec(v float64) float64 {
	if !finite(v) {
		return jsonFinite(v)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 9, 64), 64)
	return r
}

// jsonReport rounds a load report for JSON and YAML.
func jsonReport(r load.Report) load.Report {
	r.ArrivalRate, r.Capacity, r.Rate, r.Cost = jsonSpec(r.ArrivalRate), jsonSpec(r.Capacity), jsonSpec(r.Rate), jsonSpec(r.Cost)
	r.DurationS, r.BurstEveryS = jsonSeconds(r.DurationS), jsonSeconds(r.BurstEveryS)
	r.RedisCallsPerRequest, r.OpsPerSec, r.OverGrantPct = round3(r.RedisCallsPerRequest), jsonRate(r.OpsPerSec), round3(r.OverGrantPct)
	l := &r.LatencyMS
	l.Min, l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max = round3(l.Min), round3(l.Mean), round3(l.P50), round3(l.P90), round3(l.P99), round3(l.P999), round3(l.Max)
	bands := make([]load.Band, len(r.Histogram))
	for i, b := range r.Histogram {
		bands[i] = load.Band{UpToMS: round3(b.UpToMS), Count: b.Count}
	}
	r.Histogram = bands
	return r
}

// jsonSeconds rounds seconds to the microsecond.
func jsonSeconds(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e9 {
		return jsonFinite(v)
	}
	return math.Round(v*1e6) / 1e6
}

func round3(v float64) float64 {
	if !finite(v) || math.Abs(v) >= 1e12 {
		return jsonFinite(v)
	}
	return math.Round(v*1000) / 1000
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// jsonFinite keeps JSON encodable whatever a value is: encoding/json refuses NaN and ±Inf
// (the read path reports such stored values as corrupt, so none should get here), which
// become 0 and ±MaxFloat64.
func jsonFinite(v float64) float64 {
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
