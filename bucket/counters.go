package bucket

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CounterForm is how a counter or window limiter stores its count: a key bucketctl never
// takes for a bucket (a count of hits with a TTL of its window is not a level), and names
// where the key, its value and its TTL have that limiter's form. The forms are in
// counterForms (counters_known.go), each with the source it was read from.
type CounterForm struct {
	// Name identifies the form ("kong"); Limiter says whose it is and what the key holds.
	Name, Limiter string
	// Pattern is the key's naming, Value its value, TTL how the limiter sets its TTL.
	Pattern, Value, TTL string
	// Source is the repository and path the form was read from.
	Source string

	// typ is the key's Redis type: "string" (an integer) or "list".
	typ string
	// key matches the key (compiled on first use); nil: any key (the limiter takes the
	// whole key from its caller).
	key func() *regexp.Regexp
	// fits checks the TTL (and the value) against what the limiter writes, given key's
	// submatches and the value; nil: any.
	fits func(m []string, v int64, pttl time.Duration, now time.Time) bool
	// prefix is a literal every key of the form starts with, and near a cheap test every
	// key of it passes (nil: none), both checked before key: most keys are not counters.
	prefix string
	near   func(key string) bool
}

// Generic says the form names no key of its own (its caller's key is the whole key): such a
// key is like that limiter's counter, not most likely it.
func (f CounterForm) Generic() bool { return f.key == nil }

// describe is how a key of this form is named in a Problem.
func (f CounterForm) describe() string {
	if f.Generic() {
		return fmt.Sprintf("a count with a TTL and no time key, as a fixed-window counter keeps it (like %s: %s = %s)",
			f.Limiter, f.Pattern, f.Value)
	}
	return fmt.Sprintf("most likely %s (%s)", f.Limiter, f.Pattern)
}

// CounterForms lists the counter forms, in the order they are tried (the generic ones last).
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

// counterInt says v has the form of a value INCR, INCRBY and SETEX of an integer write:
// an integer in canonical form.
func counterInt(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 19 || d[0] == '0' && len(d) > 1 {
		return false
	}
	return digitsTail(d) == len(d)
}

// digitsTail is how many decimal digits s ends with.
func digitsTail(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] >= '0' && s[len(s)-1-n] <= '9' {
		n++
	}
	return n
}

// hexTail is how many lowercase hexadecimal digits s ends with.
func hexTail(s string) int {
	n := 0
	for n < len(s) && strings.IndexByte("0123456789abcdef", s[len(s)-1-n]) >= 0 {
		n++
	}
	return n
}

// counterOf returns the counter form key has: its Redis type typ, its value (a string's),
// PTTL (-1 none) and the server's now. A specific form is tried before a generic one.
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

// withCounter names the counter a key that is not a bucket most likely is, in its Problem,
// when its form says so. why, when set, says what the declared layout makes of it.
func withCounter(st State, typ, value string, why string) State {
	f, ok := counterOf(st.Key, typ, value, st.TTL, time.UnixMicro(st.Now))
	if !ok {
		return st
	}
	st.Counter = f.Name
	st.Problem = notBucket("%s", f.describe())
	if why != "" {
		st.Problem += "; " + why
	}
	return st
}

// ttlWithin: a TTL set and at most max (plus PTTL's rounding).
func ttlWithin(pttl, most time.Duration) bool {
	return pttl > 0 && pttl <= most+time.Second
}

// ttlSet: the limiter sets a TTL at its first hit, of a window the key does not name.
func ttlSet(_ []string, _ int64, pttl time.Duration, _ time.Time) bool { return pttl > 0 }

// periods are the seconds of the window names Kong and limits use (limits' month is 30
// days and its year 12 of them; Kong's year is 365 days).
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

// loneLevelTTL says why a lone level (a two-key layout's level without its time key) with
// this TTL is not a bucket of layout l, or "": its owner never sets a TTL and it has one, or
// it sets one and it has none or a longer one than the owner's (a counter with a TTL of its
// window is not a level). lo and hi bound the PTTL the reset script accepts, in ms.
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
		return fmt.Sprintf("a %s level always has a TTL; this key has none (a counter?)", l.Name), 1, hi
	case pttl > most:
		return fmt.Sprintf("its TTL of %s outlasts any %s sets for this spec (%s)", pttl.Round(time.Second), l.Name, most), 1, hi
	}
	return "", 1, hi
}
