package bucket

// GCRA layouts: limiters that store a bucket as one theoretical arrival time (TAT), the
// time at which the bucket is full again. With capacity C and rate R the level at now is
// C − (TAT − now) × R, clamped to [0, C]; a missing key is a full bucket.
//
// Two libraries, each followed to the letter (their sources are the reference):
//
//   - go-redis/redis_rate v10 (layout redis-rate): string rate:KEY holding the TAT as
//     seconds since 2017-01-01 UTC, a Lua double the server renders as a decimal, set with
//     EX ceil(TAT − now). Capacity is the Limit's Burst, rate Rate/Period. Its Lua script
//     computes in doubles with the emission interval Period/Rate.
//   - throttled/throttled v2 with store/goredisstore.v9 (layout throttled): string
//     PREFIX+KEY holding the TAT as integer Unix nanoseconds, TTL floor(TAT − now) seconds
//     and at least 1 s. Capacity is MaxBurst+1; the emission interval is period/count
//     truncated to whole nanoseconds; decisions are integer nanosecond arithmetic.
//
// Both take now from the server's TIME (microseconds), so the now passed here must be the
// server's time too.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The GCRA libraries a gcra layout can follow (Layout.Library).
const (
	libRedisRate = "redis_rate"
	libThrottled = "throttled"
)

// redisRateEpoch is redis_rate's jan_1_2017: 2017-01-01T00:00:00Z in Unix seconds.
const redisRateEpoch = 1483228800

// Plausible magnitudes: redis_rate counts seconds since 2017 (below 2^32, year 2153);
// throttled counts Unix nanoseconds (from 1e18, September 2001). The ranges are far
// apart, so a number fits at most one of them.
const (
	redisRateMax    = 1 << 32
	throttledMinTAT = int64(1e18)
)

// validateGCRA checks that a gcra layout names a library and that library's number format.
func (l Layout) validateGCRA() error {
	switch l.Library {
	case libRedisRate:
		if l.TimeUnit != unitS || !l.FloatTime {
			return fmt.Errorf("%w: layout %q: redis_rate stores float seconds: set time_unit s and float_time true", ErrInvalid, l.Name)
		}
		if l.Epoch < 0 {
			return fmt.Errorf("%w: layout %q: epoch %d must be a Unix time in seconds >= 0", ErrInvalid, l.Name, l.Epoch)
		}
	case libThrottled:
		if l.TimeUnit != unitNS || l.FloatTime || l.Epoch != 0 {
			return fmt.Errorf("%w: layout %q: throttled stores integer Unix nanoseconds: set time_unit ns, float_time false, epoch 0", ErrInvalid, l.Name)
		}
	default:
		return fmt.Errorf("%w: layout %q: library %q must be %s or %s", ErrInvalid, l.Name, l.Library, libRedisRate, libThrottled)
	}
	return nil
}

// redisRateSpec is the spec of a redis_rate Limit{Rate, Burst, Period}.
func redisRateSpec(rate, burst int, period time.Duration) Spec {
	return Spec{Capacity: float64(burst), Rate: float64(rate) / period.Seconds()}
}

// throttledSpec is the spec of a throttled RateQuota{PerDuration(count, period), maxBurst}:
// capacity maxBurst+1, one token per period/count (truncated to whole nanoseconds).
func throttledSpec(maxBurst, count int, period time.Duration) Spec {
	return Spec{Capacity: float64(maxBurst + 1), Rate: 1e9 / float64(period/time.Duration(count))}
}

// throttledInterval recovers throttled's emission interval (whole nanoseconds) from a
// rate: 1e9/rate truncated, snapped to the nearest integer when within float error of it
// (so that throttledSpec's rate gives back the library's own interval).
func throttledInterval(rate float64) int64 {
	x := 1e9 / rate
	if r := math.Round(x); math.Abs(x-r) <= 1e-15*x {
		return int64(r)
	}
	return int64(math.Floor(x))
}

// TAT is a GCRA bucket's stored theoretical arrival time (State.TAT): the time at which
// the bucket is full again. A redis_rate TAT also keeps the exact double the library reads.
type TAT struct {
	// Unix is the TAT in Unix nanoseconds.
	Unix int64
	// seconds is redis_rate's value as its Lua script reads it (seconds since the epoch).
	seconds float64
}

// Time is the TAT as a time.
func (t TAT) Time() time.Time { return time.Unix(0, t.Unix) }

// parseTAT reads a stored value of a gcra layout the way the library reads it, and
// refuses what the library cannot use or could not have written.
func (l Layout) parseTAT(v string) (TAT, error) {
	switch l.Library {
	case libRedisRate:
		f, ok := ParseNumber(v)
		if !ok {
			return TAT{}, fmt.Errorf("value %q is not a decimal number (or it overflows)", v)
		}
		if f < 0 || f >= redisRateMax {
			return TAT{}, fmt.Errorf("value %q is out of range for seconds since %s", v, time.Unix(l.Epoch, 0).UTC().Format("2006-01-02"))
		}
		sec := math.Floor(f)
		ns := (l.Epoch+int64(sec))*1e9 + int64(math.Round((f-sec)*1e9))
		return TAT{Unix: ns, seconds: f}, nil
	case libThrottled:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return TAT{}, fmt.Errorf("value %q is not an integer (throttled reads it with ParseInt)", v)
		}
		if strconv.FormatInt(n, 10) != v {
			return TAT{}, fmt.Errorf("value %q is not written as throttled writes integers: its compare-and-swap would never match", v)
		}
		if n < throttledMinTAT {
			return TAT{}, fmt.Errorf("value %q is out of range for Unix nanoseconds", v)
		}
		return TAT{Unix: n}, nil
	}
	return TAT{}, fmt.Errorf("%w: layout %q is not a gcra layout", ErrInvalid, l.Name)
}

// luaNow is now as redis_rate's script computes it from TIME: (sec − epoch) + usec/1e6.
func luaNow(now time.Time, epoch int64) float64 {
	return float64(now.Unix()-epoch) + float64(now.Nanosecond()/1000)/1e6
}

// nowNanos is the server's now as throttled sees it: TIME in microseconds, as nanoseconds.
func nowNanos(now time.Time) int64 { return now.UnixMicro() * 1000 }

// gcraTokens is the level of a bucket with the stored TAT at now: capacity − (TAT − now)
// × rate, clamped to [0, capacity]. ahead is how far the TAT lies beyond a full window
// (capacity/rate from now), which no decision of the library with this spec can write: it
// means a lowered capacity, a clock that ran backwards, or another writer; 0 otherwise.
func (l Layout) gcraTokens(spec Spec, t TAT, now time.Time) (tokens float64, ahead time.Duration) {
	var d float64 // TAT − now, in emission intervals
	var window, dt time.Duration
	if l.Library == libRedisRate {
		T := 1 / spec.Rate
		ds := float64(t.seconds - luaNow(now, l.Epoch))
		d = ds / T
		dt = time.Duration(math.Round((ds - spec.Capacity*T) * 1e9))
	} else {
		T := throttledInterval(spec.Rate)
		dn := t.Unix - nowNanos(now)
		d = float64(dn) / float64(T)
		window = time.Duration(math.Round(spec.Capacity * float64(T)))
		dt = time.Duration(dn) - window
	}
	if dt > 0 {
		ahead = dt
	}
	return math.Max(0, math.Min(spec.Capacity, spec.Capacity-d)), ahead
}

// gcraAnswer is what the library answers to one request of cost at now, as its Go API
// returns it; the exact level is gcraTokens. Where it differs from the exact answer:
//
//   - Remaining is the tokens left truncated to a whole number (both libraries).
//   - redis_rate returns its durations through Lua's tostring (14 significant digits),
//     then truncates them to nanoseconds; an allowed request has RetryAfter -1 (ns). A
//     cost above capacity is denied with a finite RetryAfter although it never succeeds.
//   - throttled denies a cost above capacity with Remaining = capacity, ResetAfter 0 and
//     RetryAfter -1. Cost 0 is its peek: never denied, RetryAfter says when 1 token is there.
type gcraAnswer struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration
	ResetAfter time.Duration
	// Write says the library stores NewTAT with TTL (whole seconds) after this request.
	// Cost 0 writes too: redis_rate re-sets a bucket that is not full, throttled re-sets
	// every bucket and creates a missing one (TAT now, TTL 1 s).
	Write  bool
	NewTAT TAT
	TTL    time.Duration
}

// gcraDecide computes the library's answer to a request of cost at now for the stored
// TAT (nil: the key is missing), with the library's own arithmetic and rounding.
func (l Layout) gcraDecide(spec Spec, stored *TAT, now time.Time, cost int) (gcraAnswer, error) {
	if err := spec.Validate(); err != nil {
		return gcraAnswer{}, err
	}
	if cost < 0 {
		return gcraAnswer{}, fmt.Errorf("%w: cost %d must be >= 0", ErrInvalid, cost)
	}
	switch l.Library {
	case libRedisRate:
		return l.decideRedisRate(spec, stored, now, cost), nil
	case libThrottled:
		return decideThrottled(spec, stored, now, cost), nil
	}
	return gcraAnswer{}, fmt.Errorf("%w: layout %q is not a gcra layout", ErrInvalid, l.Name)
}

// decideRedisRate is redis_rate's allowN script in Go, operation for operation in doubles.
// float64() conversions keep the compiler from fusing multiply-adds.
func (l Layout) decideRedisRate(spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	T := 1 / spec.Rate
	nowS := luaNow(now, l.Epoch)
	tat := nowS
	if stored != nil {
		tat = stored.seconds
	}
	tat = math.Max(tat, nowS)
	increment := float64(T * float64(cost))
	burstOffset := float64(T * spec.Capacity)
	newTat := float64(tat + increment)
	allowAt := float64(newTat - burstOffset)
	diff := float64(nowS - allowAt)
	remaining := float64(diff / T)
	if remaining < 0 {
		return gcraAnswer{RetryAfter: luaDuration(-diff), ResetAfter: luaDuration(tat - nowS)}
	}
	d := gcraAnswer{Allowed: true, Remaining: int(remaining), RetryAfter: -1}
	resetAfter := float64(newTat - nowS)
	d.ResetAfter = luaDuration(resetAfter)
	if resetAfter > 0 {
		d.Write = true
		d.NewTAT = TAT{seconds: newTat, Unix: l.unixOf(newTat)}
		d.TTL = time.Duration(math.Ceil(resetAfter)) * time.Second
	}
	return d
}

// unixOf converts redis_rate seconds since the epoch to Unix nanoseconds.
func (l Layout) unixOf(s float64) int64 {
	sec := math.Floor(s)
	return (l.Epoch+int64(sec))*1e9 + int64(math.Round((s-sec)*1e9))
}

// luaDuration is a duration as redis_rate returns it: tostring (%.14g), ParseFloat, and
// time.Duration(f × 1e9) truncated; -1 stays -1.
func luaDuration(f float64) time.Duration {
	g, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 14, 64), 64)
	if g == -1 {
		return -1
	}
	return time.Duration(g * float64(time.Second))
}

// decideThrottled is GCRARateLimiterCtx.RateLimitCtx (one attempt, no concurrent writer)
// in Go, in integer nanoseconds.
func decideThrottled(spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer {
	T := throttledInterval(spec.Rate)
	dvt := int64(math.Round(spec.Capacity * float64(T)))
	n := nowNanos(now)
	tat := n
	if stored != nil {
		tat = stored.Unix
	}
	q := int64(cost)
	if q == 0 {
		q = 1 // throttled simulates quantity 1 for cost 0, to compute a RetryAfter
	}
	inc := q * T
	base := max(tat, n)
	newTat := base + inc
	d := gcraAnswer{Allowed: true, RetryAfter: -1}
	var ttl int64
	if diff := n - (newTat - dvt); diff < 0 {
		if inc <= dvt {
			d.RetryAfter = time.Duration(-diff)
			ttl = tat - n
		}
		if cost != 0 {
			d.Allowed = false
		}
	}
	if d.Allowed {
		if cost == 0 {
			newTat = base
		}
		ttl = newTat - n
		d.Write, d.NewTAT, d.TTL = true, TAT{Unix: newTat}, throttledTTL(ttl)
	}
	if next := dvt - ttl; next > -T {
		d.Remaining = int(next / T)
	}
	d.ResetAfter = time.Duration(ttl)
	return d
}

// throttledTTL is the TTL goredisstore sets: whole seconds, truncated, at least 1 s.
func throttledTTL(ns int64) time.Duration {
	return max(time.Second, time.Duration(ns)/time.Second*time.Second)
}

// gcraWrite is what a reset writes to leave a level: SET key Value EX TTL, or a delete.
type gcraWrite struct {
	// Delete: the level is a full bucket, which both libraries read from a missing key
	// (neither stores a full bucket: a TTL of 0 is not a TTL).
	Delete bool
	Value  string
	TTL    time.Duration
	TAT    TAT
}

// gcraReset is the write that leaves exactly tokens at now (the server's time) in the
// library's number format, with the TTL the library itself would set. The TAT is rounded
// to the layout's resolution towards more tokens (redis_rate: microseconds, so at most
// 1 µs of refill more; throttled: nanoseconds), so the library allows exactly floor(tokens)
// requests of cost 1 right after the write.
func (l Layout) gcraReset(spec Spec, tokens float64, now time.Time) (gcraWrite, error) {
	if err := spec.Validate(); err != nil {
		return gcraWrite{}, err
	}
	if !finite(tokens) || tokens < 0 || tokens > spec.Capacity {
		return gcraWrite{}, fmt.Errorf("%w: tokens %v: must be between 0 and the capacity %v", ErrInvalid, tokens, spec.Capacity)
	}
	switch l.Library {
	case libRedisRate:
		waitUs := int64(math.Floor((spec.Capacity - tokens) / spec.Rate * 1e6))
		if waitUs <= 0 {
			return gcraWrite{Delete: true}, nil
		}
		// The decimal becomes the nearest double when read; when that rounds up, so that
		// the library would see a hair less than tokens at now, step back one microsecond.
		us := now.UnixMicro() - l.Epoch*1e6 + waitUs
		for {
			v := strconv.FormatInt(us/1e6, 10)
			if frac := us % 1e6; frac != 0 {
				v += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
			}
			t, err := l.parseTAT(v)
			if err != nil {
				return gcraWrite{}, err
			}
			if left, _ := l.gcraTokens(spec, t, now); left < tokens && waitUs > 1 {
				us, waitUs = us-1, waitUs-1
				continue
			}
			// EX ceil(TAT − now), computed in doubles as the library's script does.
			ttl := max(time.Second, time.Duration(math.Ceil(float64(t.seconds-luaNow(now, l.Epoch))))*time.Second)
			return gcraWrite{Value: v, TAT: t, TTL: ttl}, nil
		}
	case libThrottled:
		T := throttledInterval(spec.Rate)
		var waitNs int64
		if k := spec.Capacity - tokens; k == math.Trunc(k) {
			waitNs = int64(k) * T
		} else {
			waitNs = int64(math.Floor(k * float64(T)))
		}
		if waitNs <= 0 {
			return gcraWrite{Delete: true}, nil
		}
		tat := nowNanos(now) + waitNs
		return gcraWrite{Value: strconv.FormatInt(tat, 10), TAT: TAT{Unix: tat}, TTL: throttledTTL(waitNs)}, nil
	}
	return gcraWrite{}, fmt.Errorf("%w: layout %q is not a gcra layout", ErrInvalid, l.Name)
}
