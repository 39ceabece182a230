package bucket

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// tatForm is how a GCRA library stores a TAT, and its level arithmetic.
type tatForm interface {
	validate(l Layout) error
	parse(l Layout, v string) (TAT, error)
	// tokens is the clamped level of t at now, and past how far t lies beyond a full window.
	tokens(l Layout, spec Spec, t TAT, now time.Time) (tokens float64, past time.Duration)
	tatFor(l Layout, spec Spec, tokens float64, now time.Time) TAT
	// resetTAT is the value a reset writes to leave tokens at now; full says a delete.
	resetTAT(l Layout, spec Spec, tokens float64, now time.Time) (value string, t TAT, full bool, err error)
	scriptRange() (lo, hi string) // the stored number's range [lo, hi)
}

// secondsTAT: a decimal of seconds since the layout's epoch, below 2^32 (redis_rate).
type secondsTAT struct{}

const secondsMax = 1 << 32

func (secondsTAT) validate(l Layout) error {
	if l.TimeUnit != unitS || !l.FloatTime {
		return fmt.Errorf("%w: layout %q: %s stores float seconds: set time_unit s and float_time true", ErrInvalid, l.Name, l.Library)
	}
	if l.Epoch < 0 {
		return fmt.Errorf("%w: layout %q: epoch %d must be a Unix time in seconds >= 0", ErrInvalid, l.Name, l.Epoch)
	}
	return nil
}

func (secondsTAT) parse(l Layout, v string) (TAT, error) {
	f, ok := ParseNumber(v)
	if !ok {
		return TAT{}, fmt.Errorf("value %q is not a decimal number (or it overflows)", v)
	}
	if f < 0 || f >= secondsMax {
		return TAT{}, fmt.Errorf("value %q is out of range for seconds since %s", v, time.Unix(l.Epoch, 0).UTC().Format("2006-01-02"))
	}
	return TAT{Unix: l.unixOf(f), seconds: f}, nil
}

func luaNow(now time.Time, epoch int64) float64 {
	return float64(now.Unix()-epoch) + float64(now.Nanosecond()/1000)/1e6
}

func (l Layout) unixOf(s float64) int64 {
	sec := math.Floor(s)
	return (l.Epoch+int64(sec))*1e9 + int64(math.Round((s-sec)*1e9))
}

// emission is the float-seconds scripts' emission_interval, period / rate: a rate of n per
// second, minute, hour or day gives that very double, which 1 / rate can miss by an ulp.
func emission(rate float64) float64 {
	for _, p := range [...]float64{1, 60, 3600, 86400} {
		if n := math.Round(rate * p); n >= 1 && n/p == rate {
			return p / n
		}
	}
	return 1 / rate
}

func (secondsTAT) tokens(l Layout, spec Spec, t TAT, now time.Time) (float64, time.Duration) {
	T := emission(spec.Rate)
	ds := float64(t.seconds - luaNow(now, l.Epoch))
	d := ds / T
	past := time.Duration(math.Round((ds - spec.Capacity*T) * 1e9))
	return math.Max(0, math.Min(spec.Capacity, spec.Capacity-d)), past
}

func (secondsTAT) tatFor(l Layout, spec Spec, tokens float64, now time.Time) TAT {
	waitNs := int64(math.Round((spec.Capacity - tokens) / spec.Rate * 1e9))
	return TAT{Unix: nowNanos(now) + waitNs, seconds: luaNow(now, l.Epoch) + float64(waitNs)/1e9}
}

// resetTAT: the TAT floored to µs, one µs earlier while the double read rounds it up.
func (secondsTAT) resetTAT(l Layout, spec Spec, tokens float64, now time.Time) (string, TAT, bool, error) {
	waitUs := int64(math.Floor((spec.Capacity - tokens) / spec.Rate * 1e6))
	if waitUs <= 0 {
		return "", TAT{}, true, nil
	}
	us := now.UnixMicro() - l.Epoch*1e6 + waitUs
	for {
		v := strconv.FormatInt(us/1e6, 10)
		if frac := us % 1e6; frac != 0 {
			v += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		t, err := l.parseTAT(v)
		if err != nil {
			return "", TAT{}, false, err
		}
		if left, _ := l.gcraTokens(spec, t, now); left < tokens && waitUs > 1 {
			us, waitUs = us-1, waitUs-1
			continue
		}
		return v, t, false, nil
	}
}

func (secondsTAT) scriptRange() (string, string) { return "0", strconv.Itoa(secondsMax) }

// The float-seconds scripts set EX ceil(TAT − now), in their doubles (at least 1 s).
func (secondsTAT) ttlRule() (under, over time.Duration) { return time.Second, 0 }
func (secondsTAT) overdraw() float64                    { return 0 }
func (secondsTAT) writeTTL(l Layout, t TAT, now time.Time) time.Duration {
	return max(time.Second, time.Duration(math.Ceil(float64(t.seconds-luaNow(now, l.Epoch))))*time.Second)
}

// nanosTAT: a canonical integer of Unix nanoseconds from 1e18 (throttled, redis-cell).
type nanosTAT struct{}

const nanosMin = int64(1e18)

func (nanosTAT) validate(l Layout) error {
	if l.TimeUnit != unitNS || l.FloatTime || l.Epoch != 0 {
		return fmt.Errorf("%w: layout %q: %s stores integer Unix nanoseconds: set time_unit ns, float_time false, epoch 0", ErrInvalid, l.Name, l.Library)
	}
	return nil
}

func (nanosTAT) parse(l Layout, v string) (TAT, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return TAT{}, fmt.Errorf("value %q is not an integer (%s reads it as one)", v, l.Library)
	}
	if strconv.FormatInt(n, 10) != v {
		return TAT{}, fmt.Errorf("value %q is not written as %s writes integers", v, l.Library)
	}
	if n < nanosMin {
		return TAT{}, fmt.Errorf("value %q is out of range for Unix nanoseconds", v)
	}
	return TAT{Unix: n}, nil
}

// nsInterval is the emission interval in whole ns, snapped to an integer within float error.
func nsInterval(rate float64) int64 {
	x := 1e9 / rate
	if r := math.Round(x); math.Abs(x-r) <= 1e-15*x {
		return int64(r)
	}
	return int64(math.Floor(x))
}

func (nanosTAT) tokens(_ Layout, spec Spec, t TAT, now time.Time) (float64, time.Duration) {
	T := nsInterval(spec.Rate)
	dn := t.Unix - nowNanos(now)
	window := time.Duration(math.Round(spec.Capacity * float64(T)))
	d := float64(dn) / float64(T)
	return math.Max(0, math.Min(spec.Capacity, spec.Capacity-d)), time.Duration(dn) - window
}

func (nanosTAT) tatFor(_ Layout, spec Spec, tokens float64, now time.Time) TAT {
	return TAT{Unix: nowNanos(now) + int64(math.Round((spec.Capacity-tokens)/spec.Rate*1e9))}
}

func (nanosTAT) resetTAT(_ Layout, spec Spec, tokens float64, now time.Time) (string, TAT, bool, error) {
	T := nsInterval(spec.Rate)
	var waitNs int64
	if k := spec.Capacity - tokens; k == math.Trunc(k) {
		waitNs = int64(k) * T
	} else {
		waitNs = int64(math.Floor(k * float64(T)))
	}
	if waitNs <= 0 {
		return "", TAT{}, true, nil
	}
	tat := nowNanos(now) + waitNs
	return strconv.FormatInt(tat, 10), TAT{Unix: tat}, false, nil
}

func (nanosTAT) overdraw() float64 { return 0 }

func (nanosTAT) scriptRange() (string, string) {
	return strconv.FormatInt(nanosMin, 10), "9223372036854775808"
}

// nsStart is the nanosecond libraries' interval T, delay tolerance dvt, now and TAT, in ns.
func nsStart(spec Spec, stored *TAT, now time.Time) (T, dvt, n, tat int64) {
	T = nsInterval(spec.Rate)
	dvt = int64(math.Round(spec.Capacity * float64(T)))
	n = nowNanos(now)
	tat = n
	if stored != nil {
		tat = stored.Unix
	}
	return
}
