package bucket

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CounterForm is how a counter or window limiter stores its count (a key never taken for a
// bucket), with the Source it was read from.
type CounterForm struct {
	Name, Limiter       string
	Pattern, Value, TTL string
	Source              string

	typ string                // "string" (an integer) or "list"
	key func() *regexp.Regexp // nil: any key
	// fits checks the TTL and value against what the limiter writes; nil: any.
	fits func(m []string, v int64, pttl time.Duration, now time.Time) bool
	// prefix and near are cheap tests every key of the form passes, checked before key.
	prefix string
	near   func(key string) bool
}

// Generic says the form names no key of its own: such a key is only like its counter.
func (f CounterForm) Generic() bool { return f.key == nil }

// describe is how a key of this form is named in a Problem.
func (f CounterForm) describe() string {
	if f.Generic() {
		return fmt.Sprintf("a count with a TTL and no time key, as a fixed-window counter keeps it (like %s: %s = %s)",
			f.Limiter, f.Pattern, f.Value)
	}
	return fmt.Sprintf("most likely %s (%s)", f.Limiter, f.Pattern)
}

// CounterForms lists the counter forms, in the order they are tried.
func CounterForms() []CounterForm { return append([]CounterForm(nil), counterForms...) }

// LookupCounter finds a counter form by name.
func LookupCounter(name string) (CounterForm, bool) {
	for _, f := range counterForms {
		if f.Name == name {
			return f, true
		}
	}
	return CounterForm{}, false
}

// counterInt says v is an integer in canonical form, as INCR writes it.
func counterInt(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 19 || d[0] == '0' && len(d) > 1 {
		return false
	}
	return tailIn(d, decDigits) == len(d)
}

const decDigits, hexDigits = "0123456789", "0123456789abcdef"

// tailIn is how many bytes of set s ends with.
func tailIn(s, set string) int {
	n := 0
	for n < len(s) && strings.IndexByte(set, s[len(s)-1-n]) >= 0 {
		n++
	}
	return n
}

// counterOf returns the counter form of key with Redis type typ, value, PTTL and now.
func counterOf(key, typ, value string, pttl time.Duration, now time.Time) (CounterForm, bool) {
	var v int64
	if typ == "string" {
		if !counterInt(value) {
			return CounterForm{}, false
		}
		v, _ = strconv.ParseInt(value, 10, 64)
	}
	for _, f := range counterForms {
		if f.typ != typ {
			continue
		}
		var m []string
		if f.key != nil {
			if !strings.HasPrefix(key, f.prefix) || f.near != nil && !f.near(key) {
				continue
			}
			if m = f.key().FindStringSubmatch(key); m == nil {
				continue
			}
		}
		if f.fits == nil || f.fits(m, v, pttl, now) {
			return f, true
		}
	}
	return CounterForm{}, false
}

// withCounter names in st.Problem the counter a key most likely is, after why (if set).
func withCounter(st State, typ, value string, why string) State {
	f, ok := counterOf(st.Key, typ, value, st.TTL, time.UnixMicro(st.Now))
	if !ok {
		return st
	}
	st.Counter = f.Name
	st.fail(NotBucket, "%s", f.describe())
	if why != "" {
		st.Problem += "; " + why
	}
	return st
}

func ttlWithin(pttl, most time.Duration) bool { return pttl > 0 && pttl <= most+time.Second }

func ttlSet(_ []string, _ int64, pttl time.Duration, _ time.Time) bool { return pttl > 0 }

// periodOf is a window name's length (a month is 30 days; a year yearDays).
func periodOf(name string, yearDays int) time.Duration {
	switch name {
	case "second":
		return time.Second
	case "minute":
		return time.Minute
	case "hour":
		return time.Hour
	case "day":
		return 24 * time.Hour
	case "month":
		return 30 * 24 * time.Hour
	case "year":
		return time.Duration(yearDays) * 24 * time.Hour
	}
	return 0
}

// loneLevelTTL says why a two-key level without its time key, with this TTL, is not a
// bucket of l ("" if it may be); lo and hi (ms) bound the PTTL the reset script accepts.
func (l Layout) loneLevelTTL(spec Spec, pttl time.Duration) (why string, lo, hi int64) {
	m := l.Model()
	if m.NoTTLByDesign() {
		if pttl >= 0 {
			return fmt.Sprintf("%s never sets a TTL, and this key has one of %s (a counter with a TTL of its window is not a level)",
				l.Name, pttl.Round(time.Millisecond)), -1, -1
		}
		return "", -1, -1
	}
	most := m.ResetTTL(spec, spec.Wait(0, spec.Capacity)) + time.Second
	hi = most.Milliseconds()
	switch {
	case pttl < 0:
		return fmt.Sprintf("%s level always has a TTL; this key has none (a counter?)", an(l.Name)), 1, hi
	case pttl > most:
		return fmt.Sprintf("its TTL of %s outlasts any %s sets for this spec (%s)", pttl.Round(time.Second), l.Name, most), 1, hi
	}
	return "", 1, hi
}
