package bucket_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

var (
	redisRate = bucket.Presets["redis-rate"]
	throttle  = bucket.Presets["throttled"]
	// gcraNow is a server time with microseconds, as TIME gives it.
	gcraNow = time.Date(2026, 11, 23, 9, 30, 15, 123456000, time.UTC)
)

func TestGCRAPresetsValidate(t *testing.T) {
	for _, l := range bucket.GCRALayouts() {
		if err := l.Validate(); err != nil {
			t.Errorf("%s: %v", l.Name, err)
		}
		if got := l.Keys("k"); len(got) != 1 || got[0] != "k" {
			t.Errorf("%s: a gcra bucket is one key, got %v", l.Name, got)
		}
	}
	bad := []bucket.Layout{
		{Name: "x", Type: bucket.GCRA},
		{Name: "x", Type: bucket.GCRA, Library: "leaky"},
		{Name: "x", Type: bucket.GCRA, Library: "redis_rate", TimeUnit: "ms"},
		{Name: "x", Type: bucket.GCRA, Library: "redis_rate", TimeUnit: "s"},
		{Name: "x", Type: bucket.GCRA, Library: "throttled", TimeUnit: "ns", FloatTime: true},
		{Name: "x", Type: bucket.GCRA, Library: "throttled", TimeUnit: "ns", Epoch: 1},
		{Name: "x", Type: bucket.GCRA, Library: "redis-cell", TimeUnit: "s", FloatTime: true},
		{Name: "x", Type: bucket.GCRA, Library: "redis-gcra", TimeUnit: "ns"},
	}
	// A custom layout may follow any library in that library's form.
	for _, l := range []bucket.Layout{
		{Name: "x", Type: bucket.GCRA, Library: "redis-cell", TimeUnit: "ns"},
		{Name: "x", Type: bucket.GCRA, Library: "redis-gcra", TimeUnit: "s", FloatTime: true, Epoch: 1483228800},
	} {
		if err := l.Validate(); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
	for _, l := range bad {
		if err := l.Validate(); !errors.Is(err, bucket.ErrInvalid) {
			t.Errorf("%+v: want an invalid-layout error, got %v", l, err)
		}
	}
}

func TestParseTATForms(t *testing.T) {
	tat, err := redisRate.ParseTAT("311592615.5")
	if want := time.Unix(1483228800+311592615, 5e8); err != nil || !tat.Time().Equal(want) {
		t.Errorf("redis_rate 311592615.5 = %v (%v), want %v", tat.Time().UTC(), err, want)
	}
	if e, err := redisRate.ParseTAT("3.115926155e+08"); err != nil || e != tat {
		t.Errorf("redis_rate exponent form: %+v, %v; want %+v", e, err, tat)
	}
	if tat, err := throttle.ParseTAT("1795426215123456789"); err != nil || tat.Unix != 1795426215123456789 {
		t.Errorf("throttled: %d, %v", tat.Unix, err)
	}
	for _, v := range []string{"", "abc", "NaN", "inf", "1e400", "-5", " 5", "5 ", "0x10", "1_000", "4294967296"} {
		if _, err := redisRate.ParseTAT(v); err == nil {
			t.Errorf("redis_rate accepted %q", v)
		}
	}
	for _, v := range []string{"", "1.795426215e18", "+1795426215123456789", "01795426215123456789",
		"1795426215123456789.0", "311592615", "99999999999999999999"} {
		if _, err := throttle.ParseTAT(v); err == nil {
			t.Errorf("throttled accepted %q", v)
		}
	}
}

func TestGCRATokensClampAndAhead(t *testing.T) {
	spec := bucket.Spec{Capacity: 10, Rate: 2}
	for _, l := range bucket.GCRALayouts() {
		for _, c := range []struct {
			ahead  time.Duration
			tokens float64
			over   time.Duration
		}{
			{-time.Hour, 10, 0}, {0, 10, 0}, {time.Second, 8, 0}, {5 * time.Second, 0, 0}, {7 * time.Second, 0, 2 * time.Second},
		} {
			w, err := l.GCRAReset(spec, 0, gcraNow)
			if err != nil {
				t.Fatal(err)
			}
			// Shift the TAT of an empty bucket (5 s ahead) to c.ahead.
			tat := shiftTAT(t, l, w.Value, c.ahead-5*time.Second)
			got, over := l.GCRATokens(spec, tat, gcraNow)
			// A library whose rounding overdraws writes that much past a full window itself.
			want := max(0, c.over-time.Duration(l.GCRAOverdraw()/spec.Rate*1e9))
			if math.Abs(got-c.tokens) > 1e-6 || (over-want).Abs() > time.Microsecond {
				t.Errorf("%s TAT now%+v: %v tokens, ahead %s; want %v, %s", l.Name, c.ahead, got, over, c.tokens, want)
			}
		}
	}
}

func shiftTAT(t *testing.T, l bucket.Layout, v string, d time.Duration) bucket.TAT {
	t.Helper()
	var s string
	if l.TimeUnit == "ns" {
		n, _ := strconv.ParseInt(v, 10, 64)
		s = strconv.FormatInt(n+int64(d), 10)
	} else {
		f, _ := strconv.ParseFloat(v, 64)
		s = strconv.FormatFloat(f+d.Seconds(), 'f', -1, 64)
	}
	tat, err := l.ParseTAT(s)
	if err != nil {
		t.Fatal(err)
	}
	return tat
}

// Property: a reset leaves at least N and at most N plus the rounding of the TAT (1 µs of
// refill for redis_rate, 1 ns for throttled), read at the reset's own now; the TTL is the
// library's; the value is in the library's form.
func TestGCRAResetInverseProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 15))
	for i := range 2000 {
		spec := bucket.Spec{Capacity: float64(1 + rng.IntN(1000)), Rate: math.Round(rng.Float64()*1e4) / 100}
		if spec.Rate == 0 {
			spec.Rate = 0.01
		}
		n := float64(rng.IntN(int(spec.Capacity) + 1))
		if i%2 == 1 {
			n = rng.Float64() * spec.Capacity
		}
		now := gcraNow.Add(time.Duration(rng.Int64N(int64(100 * 24 * time.Hour)))).Truncate(time.Microsecond)
		for _, l := range bucket.GCRALayouts() {
			w, err := l.GCRAReset(spec, n, now)
			if err != nil {
				t.Fatal(err)
			}
			if w.Delete {
				if got := (spec.Capacity - n) / spec.Rate; got > 1e-6 {
					t.Errorf("%s %+v N=%v: deletes, but the bucket is %v s from full", l.Name, spec, n, got)
				}
				continue
			}
			tat, err := l.ParseTAT(w.Value)
			if err != nil {
				t.Fatalf("%s: reset value %q does not parse: %v", l.Name, w.Value, err)
			}
			got, _ := l.GCRATokens(spec, tat, now)
			// Float seconds: up to 2 µs (the TAT is floored to µs, and stepped back one µs
			// when the double of its decimal rounds up), plus the double's resolution;
			// integer ns: 1 ns.
			slack := spec.Rate*2.1e-6 + 1e-12*spec.Capacity
			if l.TimeUnit == "ns" {
				slack = spec.Rate*1e-9 + 1e-12*spec.Capacity
			}
			if got < n || got > n+slack {
				t.Errorf("%s %+v N=%v at %v: wrote %q, reads %v", l.Name, spec, n, now, w.Value, got)
			}
			wait := time.Duration(tat.Unix - now.UnixNano())
			var want time.Duration
			switch l.Library {
			case "redis_rate", "redis-gcra":
				// EX ceil(new_tat − now), in the script's doubles.
				f, _ := strconv.ParseFloat(w.Value, 64)
				luaNow := float64(now.Unix()-1483228800) + float64(now.Nanosecond()/1000)/1e6
				want = time.Duration(math.Ceil(f-luaNow)) * time.Second
			case "throttled":
				want = max(time.Second, wait.Truncate(time.Second)) // floor, >= 1 s
			case "redis-cell":
				want = max(time.Millisecond, wait.Truncate(time.Millisecond)) // PX whole ms
			default:
				t.Fatalf("%s: no TTL rule known for library %s", l.Name, l.Library)
			}
			if w.TTL != want {
				t.Errorf("%s %+v N=%v: TTL %s for a TAT %s ahead, want %s", l.Name, spec, n, w.TTL, wait, want)
			}
			if strings.ContainsAny(w.Value, "eE+") {
				t.Errorf("%s: value %q has an exponent or a sign", l.Name, w.Value)
			}
		}
	}
}

func TestGCRAResetRefusesBadLevels(t *testing.T) {
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	for _, l := range bucket.GCRALayouts() {
		for _, n := range []float64{-1, 10.5, math.NaN(), math.Inf(1)} {
			if _, err := l.GCRAReset(spec, n, gcraNow); !errors.Is(err, bucket.ErrInvalid) {
				t.Errorf("%s: tokens %v: want ErrInvalid, got %v", l.Name, n, err)
			}
		}
		if _, err := l.GCRAReset(bucket.Spec{}, 1, gcraNow); !errors.Is(err, bucket.ErrInvalid) {
			t.Errorf("%s: no spec: want ErrInvalid, got %v", l.Name, err)
		}
		if w, err := l.GCRAReset(spec, 10, gcraNow); err != nil || !w.Delete {
			t.Errorf("%s: a full bucket is a delete, got %+v, %v", l.Name, w, err)
		}
	}
	if _, err := bucket.NativeLayout.GCRAReset(spec, 1, gcraNow); !errors.Is(err, bucket.ErrInvalid) {
		t.Errorf("native layout: want ErrInvalid, got %v", err)
	}
}

// throttled's emission interval is period/count truncated to whole nanoseconds: 6/s is
// 166666666 ns, not 166666667, both from the spec of a rule and from ThrottledSpec.
func TestThrottledIntervalTruncates(t *testing.T) {
	for _, c := range []struct {
		count  int
		period time.Duration
	}{{6, time.Second}, {3, time.Minute}, {7, 24 * time.Hour}, {1000, time.Second}, {9, time.Hour}} {
		want := int64(c.period / time.Duration(c.count))
		for _, spec := range []bucket.Spec{
			bucket.ThrottledSpec(4, c.count, c.period),
			{Capacity: 5, Rate: float64(c.count) / c.period.Seconds()},
		} {
			w, err := throttle.GCRAReset(spec, 4, gcraNow)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.TAT.Unix - gcraNow.UnixNano(); got != want {
				t.Errorf("%d per %s (rate %v): one token is %d ns, throttled's interval is %d", c.count, c.period, spec.Rate, got, want)
			}
		}
	}
}

// The libraries' answers where they differ from the exact ones.
func TestGCRADecideLibraryQuirks(t *testing.T) {
	spec := bucket.Spec{Capacity: 5, Rate: 1}
	// A cost above capacity: redis_rate gives a finite RetryAfter; throttled gives
	// Remaining = capacity, ResetAfter 0 and RetryAfter -1.
	d, _ := redisRate.GCRADecide(spec, nil, gcraNow, 7)
	if d.Allowed || d.RetryAfter != 2*time.Second || d.ResetAfter != 0 || d.Write {
		t.Errorf("redis_rate cost 7 of 5: %+v", d)
	}
	d, _ = throttle.GCRADecide(spec, nil, gcraNow, 7)
	if d.Allowed || d.RetryAfter != -1 || d.Remaining != 5 || d.ResetAfter != 0 || d.Write {
		t.Errorf("throttled cost 7 of 5: %+v", d)
	}
	// Cost 0 on a missing key: throttled creates it (TAT now, TTL 1 s); redis_rate does not.
	d, _ = throttle.GCRADecide(spec, nil, gcraNow, 0)
	if !d.Allowed || !d.Write || d.TTL != time.Second || d.NewTAT.Unix != gcraNow.UnixNano() || d.Remaining != 5 {
		t.Errorf("throttled cost 0 on a missing key: %+v", d)
	}
	d, _ = redisRate.GCRADecide(spec, nil, gcraNow, 0)
	if !d.Allowed || d.Write || d.Remaining != 5 || d.RetryAfter != -1 {
		t.Errorf("redis_rate cost 0 on a missing key: %+v", d)
	}
	// Remaining is truncated: 2.5 tokens left after a cost of 1 report 2; redis-gcra
	// rounds it to nearest (floor(x + 0.5)): 3.
	for _, l := range bucket.GCRALayouts() {
		w, _ := l.GCRAReset(spec, 3.5, gcraNow)
		d, _ := l.GCRADecide(spec, &w.TAT, gcraNow, 1)
		want := 2
		if l.Library == "redis-gcra" {
			want = 3
		}
		if !d.Allowed || d.Remaining != want {
			t.Errorf("%s: 3.5 tokens, cost 1: %+v, want Remaining %d", l.Name, d, want)
		}
		if _, err := l.GCRADecide(spec, nil, gcraNow, -1); !errors.Is(err, bucket.ErrInvalid) {
			t.Errorf("%s: cost -1: %v", l.Name, err)
		}
	}
}

// redis_rate's durations pass through Lua's tostring (14 significant digits) and are then
// truncated to nanoseconds.
func TestLuaDurationRounding(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want time.Duration
	}{
		{123456.78901234567, 123456789012350}, // not ...012345
		{0.1234567890123456789, 123456789},
		{-1, -1},
		{2.5, 2500 * time.Millisecond},
	} {
		if got := bucket.LuaDuration(c.f); got != c.want {
			t.Errorf("LuaDuration(%v) = %d, want %d", c.f, got, c.want)
		}
	}
}

func TestGCRAShapeAndDetect(t *testing.T) {
	since2017 := gcraNow.Unix() - 1483228800
	rr := func(ahead time.Duration) string {
		return strconv.FormatFloat(float64(since2017)+0.123456+ahead.Seconds(), 'f', -1, 64)
	}
	th := func(ahead time.Duration) string { return strconv.FormatInt(gcraNow.Add(ahead).UnixNano(), 10) }
	for _, c := range []struct {
		key, value string
		pttl       time.Duration
		layout     string
		fit        bucket.GCRAFit
	}{
		{"rate:u1", rr(9*time.Second + 500*time.Millisecond), 10 * time.Second, "redis-rate", bucket.SureGCRA},
		{"rate:u1", rr(10 * time.Second), 10 * time.Second, "redis-rate", bucket.SureGCRA},
		// A TTL up to gcraRuleSlack longer than the library's: a bucket under a rule only.
		{"rate:u1", rr(8*time.Second + 500*time.Millisecond), 10 * time.Second, "redis-rate", bucket.MaybeGCRA},
		// redis-gcra keeps redis_rate's form and TTL with keys as given: without rate: it is
		// the guess. redis-cell's form and TTL are throttled's, within a narrower rule: the
		// guess is throttled, also for a TTL exact to the millisecond.
		{"api:u1", rr(9 * time.Second), 10 * time.Second, "redis-gcra", bucket.SureGCRA},
		{"api:u1", rr(8*time.Second + 500*time.Millisecond), 10 * time.Second, "redis-gcra", bucket.MaybeGCRA},
		{"u1", th(10*time.Second + 300*time.Microsecond), 10 * time.Second, "throttled", bucket.SureGCRA},
		{"u1", th(10*time.Second + 500*time.Millisecond), 10 * time.Second, "throttled", bucket.SureGCRA},
		{"u1", th(10*time.Second + 50*time.Millisecond), 10 * time.Second, "throttled", bucket.SureGCRA},
		// No TTL, or one the library could not have set for the TAT: never a bucket.
		{"rate:u1", rr(10*time.Second + 500*time.Millisecond), 10 * time.Second, "", bucket.NotGCRA},
		{"rate:u1", rr(time.Hour), 10 * time.Second, "", bucket.NotGCRA},
		{"rate:u1", rr(5 * time.Second), 10 * time.Second, "", bucket.NotGCRA},
		{"rate:u1", rr(time.Second), -1, "", bucket.NotGCRA},
		{"api:u1", rr(time.Second), -1, "", bucket.NotGCRA},
		// A fixed-window counter under rate: is a number, but not a TAT with its TTL.
		{"rate:u1", "42", 60 * time.Second, "", bucket.NotGCRA},
		{"rate:u1", "1500", -1, "", bucket.NotGCRA},
		// Unix seconds of now would be a TAT decades ahead.
		{"rate:u1", strconv.FormatInt(gcraNow.Unix(), 10), -1, "", bucket.NotGCRA},
		{"throttle:u1", th(10*time.Second + 700*time.Millisecond), 10 * time.Second, "throttled", bucket.SureGCRA},
		{"u1", th(300 * time.Millisecond), time.Second, "throttled", bucket.SureGCRA},
		{"u1", th(8*time.Second + 500*time.Millisecond), 10 * time.Second, "throttled", bucket.MaybeGCRA},
		{"u1", th(time.Minute), time.Second, "", bucket.NotGCRA},
		{"u1", th(time.Minute), -1, "", bucket.NotGCRA},
		{"u1", th(0), 30 * time.Minute, "", bucket.NotGCRA}, // a timestamp with a TTL of its own
		{"rate:u1", "hello", 10 * time.Second, "", bucket.NotGCRA},
		{"rate:u1", strconv.FormatInt(gcraNow.UnixMilli(), 10), 10 * time.Second, "", bucket.NotGCRA},
		{"u1", "1.7954262151234568e+18", 10 * time.Second, "", bucket.NotGCRA},
	} {
		l, fit, why := bucket.DetectGCRA(c.key, c.value, c.pttl, gcraNow)
		if fit != c.fit || l.Name != c.layout {
			t.Errorf("%s = %q PTTL %s: detected %q %s (%s), want %q %s", c.key, c.value, c.pttl, l.Name, fit, why, c.layout, c.fit)
		}
		if fit != bucket.SureGCRA && why == "" {
			t.Errorf("%s = %q: no reason given for %s", c.key, c.value, fit)
		}
	}
	for _, l := range bucket.GCRALayouts() {
		v := "1500"
		if l.TimeUnit == "ns" {
			v = th(0)
		}
		want := "a " + l.Name + " bucket always has a TTL; this string has none (a counter?)"
		if fit, why := l.GCRAShape("rl:signups:total", v, -1, gcraNow); fit != bucket.NotGCRA || why != want {
			t.Errorf("%s: %q without a TTL: %s (%s), want %s (%s)", l.Name, v, fit, why, bucket.NotGCRA, want)
		}
	}
	if fit, _ := bucket.Presets["express"].GCRAShape("k", "1", 1, gcraNow); fit != bucket.NotGCRA {
		t.Errorf("a hash layout fits a string: %s", fit)
	}
}

func TestGCRAStateReading(t *testing.T) {
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	st, err := bucket.GCRAState(throttle, spec, "k", "", false, -2, gcraNow)
	if err != nil || st.Exists || st.Tokens != 10 || st.Fit != bucket.SureGCRA || st.TTL != -2 {
		t.Errorf("missing key: %+v, %v", st, err)
	}
	w, _ := throttle.GCRAReset(spec, 4, gcraNow)
	st, err = bucket.GCRAState(throttle, spec, "k", w.Value, true, w.TTL, gcraNow)
	if err != nil || st.Tokens != 4 || st.Fit != bucket.SureGCRA || st.AheadOfServer() || st.TAT != w.TAT {
		t.Errorf("4 tokens: %+v, %v", st, err)
	}
	// 3 s beyond a full window: clamped at 0, ahead of the server by 3 s.
	far := strconv.FormatInt(gcraNow.Add(13*time.Second).UnixNano(), 10)
	st, _ = bucket.GCRAState(throttle, spec, "k", far, true, 13*time.Second, gcraNow)
	if st.Tokens != 0 || st.Ahead != 3*time.Second || !st.AheadOfServer() {
		t.Errorf("TAT 13 s ahead of a 10 s window: %+v", st)
	}
	// Without a spec: the TAT and fit, no level.
	st, _ = bucket.GCRAState(throttle, bucket.Spec{}, "k", w.Value, true, w.TTL, gcraNow)
	if st.Tokens != 0 || st.TAT != w.TAT || st.Fit != bucket.SureGCRA {
		t.Errorf("no spec: %+v", st)
	}
	st, _ = bucket.GCRAState(redisRate, spec, "rate:k", "x1", true, w.TTL, gcraNow)
	if st.Fit != bucket.NotGCRA || !strings.Contains(st.Reason, "not a decimal number") {
		t.Errorf("not a number: %+v", st)
	}
	if _, err := bucket.GCRAState(bucket.NativeLayout, spec, "k", "1", true, -1, gcraNow); !errors.Is(err, bucket.ErrInvalid) {
		t.Errorf("native layout: %v", err)
	}
}
