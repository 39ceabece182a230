package format

import (
	"math"
	"strconv"
	"time"
)

// Duration writes a duration at a glance (850ms, 3.7s, 1m4s, 2h5m, 3d4h), cut toward zero
// to what is shown: 9.96s is 9.9s. A time to wait is a Wait, rounded up.
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-max(d, -math.MaxInt64)) // -MinInt64 overflows
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Microsecond:
		return "<1µs"
	case d < time.Millisecond:
		return strconv.FormatInt(d.Microseconds(), 10) + "µs"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < 10*time.Second:
		return Decimal(d.Truncate(100*time.Millisecond).Seconds(), 1) + "s"
	case d < time.Minute:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d < time.Hour:
		return compound(d, time.Minute, "m", time.Second, "s")
	case d < 24*time.Hour:
		return compound(d, time.Hour, "h", time.Minute, "m")
	}
	return compound(d, 24*time.Hour, "d", time.Hour, "h")
}

func compound(d, big time.Duration, bigU string, small time.Duration, smallU string) string {
	b := append(strconv.AppendInt(make([]byte, 0, 24), int64(d/big), 10), bigU...)
	if r := (d % big) / small; r > 0 {
		b = append(strconv.AppendInt(b, int64(r), 10), smallU...)
	}
	return string(b)
}

// Seconds writes a measured run time to the millisecond, cut toward zero: 2.004s, 61.5s.
func Seconds(s float64) string {
	if v, ok := special(s); ok {
		return v + "s"
	}
	return Decimal(floorTo(s, 3), 3) + "s"
}

// TTL writes a key's TTL: -1 (no TTL) is "none", -2 (no key) "-", otherwise a Wait.
func TTL(d time.Duration) string {
	switch {
	case d == -1:
		return "none"
	case d == -2:
		return "-"
	case d < 0:
		return "?"
	}
	return Wait(d)
}

// NeverAllowed is the retry-after of a request whose cost is above the bucket's capacity.
const NeverAllowed = "never: cost exceeds capacity"

// RetryAfter writes how long until a request can pass (a Wait); negative is NeverAllowed.
func RetryAfter(d time.Duration) string {
	if d < 0 {
		return NeverAllowed
	}
	return Wait(d)
}

// Wait writes how long until something happens as Duration does, but rounded up: a wait
// read short retries too early. 9.91s is 10s, 61.2s is 1m2s.
func Wait(d time.Duration) string {
	if d <= time.Microsecond {
		return Duration(d)
	}
	unit := time.Hour
	switch {
	case d < time.Millisecond:
		unit = time.Microsecond
	case d < time.Second:
		unit = time.Millisecond
	case d < 10*time.Second:
		unit = 100 * time.Millisecond
	case d < time.Hour:
		unit = time.Second
	case d < 24*time.Hour:
		unit = time.Minute
	}
	if d > math.MaxInt64-unit {
		return Duration(d)
	}
	return Duration((d + unit - 1) / unit * unit)
}

// Latency writes milliseconds to three significant digits, cut toward zero: 412µs, 1.23ms,
// 123ms, 1.2s; "–" when nothing was measured.
func Latency(msec float64) string {
	switch {
	case msec <= 0 || math.IsNaN(msec):
		return "–"
	case msec < 1 || msec >= 1000:
		return Duration(time.Duration(math.Round(msec * float64(time.Millisecond)))) // to the ns: no float noise
	case msec < 10:
		return Decimal(floorTo(msec, 2), 2) + "ms"
	case msec < 100:
		return Decimal(floorTo(msec, 1), 1) + "ms"
	}
	return Decimal(floorTo(msec, 0), 0) + "ms"
}

// Ago is when something happened, d before now: "4.2s ago"; a negative d reads as Ahead.
func Ago(d time.Duration) string {
	if d < 0 {
		return Ahead(-d)
	}
	return Duration(d) + " ago"
}

// Age is Ago for a column: "4.2s", or AheadShort.
func Age(d time.Duration) string {
	if d < 0 {
		return AheadShort(-d)
	}
	return Duration(d)
}

// Ahead says a stored time is d ahead of the server's clock.
func Ahead(d time.Duration) string {
	return AheadShort(d) + " of the server's clock (client clock skew?)"
}

// AheadShort is Ahead for a column: "4.2s ahead".
func AheadShort(d time.Duration) string { return Duration(d) + " ahead" }

// Debt says a GCRA bucket's TAT lies d past a full window.
func Debt(d time.Duration) string {
	return "TAT " + Duration(d) + " past a full window: debt (limit lowered, or the server's clock went back?)"
}
