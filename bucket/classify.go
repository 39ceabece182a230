package bucket

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// The ranges of stored values, shared with scripts/number.lua (a test checks).
const (
	maxTime    = 1e17 // µs, year 5138
	maxTokens  = maxCapacity
	maxCounter = 1 << 53
)

// drop is classify's State of a scanned key to leave out: gone since SCAN, or a time key.
var drop = State{Verdict: dropped, Problem: verdictText[dropped]}

func isDrop(s State) bool { return s.Verdict == dropped }

// classify turns the raw read of key into its State, applying the shape rule (doc.go).
func classify(key string, t Target, r *keyRead, now int64, scanned bool) State {
	st := State{Key: key, Now: now, Type: r.typ, Exists: r.typ != "none", TTL: pttl(r.pttl)}
	switch r.typ {
	case "none":
		if scanned {
			return drop
		}
		l := NativeLayout
		if t.Layout != nil {
			l = *t.Layout
		}
		st.Layout, st.Spec, st.SpecSource = l, t.Spec, t.Source
		st.Stored = Level{Tokens: t.Spec.Capacity, TS: now}
		st.Tokens = t.Spec.Capacity
		return st
	case "hash":
		return classifyHash(st, t, r)
	case "string":
		return classifyString(st, t, r, scanned)
	}
	st.fail(NotBucket, "holds a %s", r.typ)
	return withCounter(st, r.typ, "", "")
}

func pttl(ms int64) time.Duration {
	if ms < 0 {
		return time.Duration(ms) // -1 no TTL, -2 no key
	}
	return time.Duration(ms) * time.Millisecond
}

func classifyHash(st State, t Target, r *keyRead) State {
	flat := r.hash
	if flat == nil {
		st.fail(NotBucket, "a hash of %d fields", r.size)
		return st
	}
	fields := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		fields[k] = v
	}
	var layout Layout
	if t.Layout != nil {
		layout = *t.Layout
		if layout.Native {
			layout = NativeHashLayout // a native bucket still in the hash written before
		}
		if layout.Type != Hash {
			st.fail(NotBucket, "a hash, but layout %s keeps a bucket in two strings", layout.Name)
			return st
		}
		if m, why := layout.hashFits(fields); m != fits {
			st.fail(verdictOf(m), "a hash that %s, not %s bucket (%s)", why, an(layout.Name), fieldNames(fields))
			return st
		}
	} else {
		l, found := detectHash(fields)
		if !found {
			if m, miss := nearestMiss(fields); miss != "" {
				st.fail(verdictOf(m), "a hash that %s (%s)", miss, fieldNames(fields))
				return st
			}
			st.fail(NotBucket, "a hash with %s", fieldNames(fields))
			return st
		}
		layout, st.Detected = l, true
	}
	st.Layout = layout
	st.Spec, st.SpecSource = t.Spec, t.Source
	if st.Detected && !layout.Native {
		st.Guess = guessHint("its fields are also what an application's own hash may hold", layout.Name)
	}
	tokens, _ := parseNumberForm(fields[layout.TokensField])
	if layout.Native {
		if st = withNativeHash(st, fields); st.Problem != "" {
			return st
		}
	}
	if h, ok := layout.Model().(hashModel); ok {
		var ts string
		if st, tokens, ts = h.fromHash(st, fields); st.Problem != "" {
			return st
		}
		return withLevel(st, tokens, ts)
	}
	return withLevel(st, tokens, fields[layout.TimeField])
}

// withNativeHash reads a native-hash bucket's stored spec and counters into st.
func withNativeHash(st State, fields map[string]string) State {
	num := func(f string) float64 {
		v, _ := parseNumberForm(fields[f])
		return v
	}
	for _, f := range []string{"capacity", "rate"} {
		p := corruptValue(f, num(f), false)
		if p == "" && num(f) == 0 {
			p = f + " is 0"
		}
		if p != "" {
			st.fail(Corrupt, "%s", p)
			return st
		}
	}
	stored := Spec{Capacity: num("capacity"), Rate: num("rate")}
	if err := stored.Validate(); err != nil {
		st.fail(Corrupt, "stored spec: %s", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		return st
	}
	st.Spec, st.SpecSource = stored, "bucket"
	for _, f := range []string{"allowed", "denied"} {
		if p := corruptValue(f, num(f), false); p != "" {
			st.fail(Corrupt, "%s", p)
			return st
		}
		if num(f) > maxCounter {
			st.fail(Corrupt, "%s %v is beyond any count of decisions", f, num(f))
			return st
		}
	}
	st.Allowed, st.Denied = counter(num("allowed")), counter(num("denied"))
	return st
}

func counter(v float64) int64 {
	if v < 0 || v > math.MaxInt64/2 || math.IsNaN(v) {
		return 0
	}
	return int64(v)
}

// withLevel fills the stored level and the level at Now, or a corrupt Problem.
func withLevel(st State, tokens float64, timeStr string) State {
	if p := corruptValue("tokens", tokens, false); p != "" {
		st.fail(Corrupt, "%s", p)
		return st
	}
	if tokens > maxTokens {
		st.fail(Corrupt, "tokens %v is beyond any bucket's capacity", tokens)
		return st
	}
	ts, err := st.Layout.ParseTime(timeStr)
	if err != nil {
		st.fail(Corrupt, "time %s is not a time", timeStr)
		return st
	}
	return withLevelAt(st, tokens, ts)
}

func withLevelAt(st State, tokens float64, ts int64) State {
	st.Stored = Level{Tokens: tokens, TS: ts}
	if st.Exists && ts > st.Now {
		st.Ahead = time.Duration(ts-st.Now) * time.Microsecond
	}
	if st.HasSpec() {
		st.Tokens = st.Layout.Level(st.Spec, st.Stored, st.Now).Tokens
	} else {
		st.Tokens = st.Stored.Tokens
	}
	return st
}

func classifyString(st State, t Target, r *keyRead, scanned bool) State {
	v := r.str
	if !r.hasStr {
		st.fail(NotBucket, "a string of %d bytes", r.size)
		return st
	}
	if IsNativeValue(v) {
		return classifyNative(st, t, v)
	}
	if t.Layout != nil && t.Layout.Native {
		st.fail(NotBucket, "a string without the native bucket's tag")
		return st
	}
	if js, ok := classifyJSON(st, t, v); ok {
		return js
	}
	tokens, isNum := parseNumberForm(v)
	if !isNum {
		st.fail(NotBucket, "a string that is not a number")
		return st
	}
	if t.Layout != nil && t.Layout.Type == Hash {
		st.fail(NotBucket, "a string, but layout %s keeps a bucket in a hash", t.Layout.Name)
		return withCounter(st, "string", v, "")
	}
	for i, p := range r.pairs {
		pv := r.pairVals[i]
		if pv == nil {
			continue
		}
		if _, ok := parseNumberForm(*pv); !ok {
			continue
		}
		if p.isMain {
			if scanned {
				return drop
			}
			st.fail(NotBucket, "the time key of %s bucket %q (name that key)", p.layout.Name, p.key)
			return st
		}
		st.Layout = *p.layout
		st.Detected = t.Layout == nil
		if st.Detected {
			st.Guess = guessHint("two numbers so named are also what an application may keep", p.layout.Name)
		}
		st.Spec, st.SpecSource = t.Spec, t.Source
		return withLevel(st, tokens, *pv)
	}
	if t.Layout != nil && t.Layout.Type == GCRA {
		if _, err := t.Layout.parseTAT(v); err != nil {
			st.fail(NotBucket, "a string that is not %s TAT: %s", an(t.Layout.Name), err)
			return withCounter(st, "string", v, "")
		}
		if fit, why := t.Layout.gcraShape(st.Key, v, st.TTL, time.UnixMicro(st.Now)); fit == notGCRA {
			st.fail(NotBucket, "%s", why)
			return withCounter(st, "string", v, "")
		}
		return classifyGCRA(st, *t.Layout, t, v, false)
	}
	if t.Layout != nil {
		if t.Layout.IsTimeKey(st.Key) {
			st.fail(NotBucket, "a number named like the time key of %s bucket (its level is missing)", an(t.Layout.Name))
			return st
		}
		timeKey, named := t.Layout.TimeKeyOf(st.Key)
		if !named {
			st.fail(NotBucket, "a number not named by the tokens_key %q of layout %s (a %s bucket is named by its tokens key)",
				t.Layout.TokensKey, t.Layout.Name, t.Layout.Name)
			return st
		}
		// A lone level lies within the capacity, with its owner's TTL, and is no counter.
		why := ""
		if t.Spec.IsZero() || tokens < 0 || tokens > t.Spec.Capacity {
			why = fmt.Sprintf("not a level within a known capacity (a lone level is %s bucket only within the capacity declared for it, with its rate)", an(t.Layout.Name))
		} else {
			why, _, _ = t.Layout.loneLevelTTL(t.Spec, st.TTL)
		}
		if f, ok := counterOf(st.Key, "string", v, st.TTL, time.UnixMicro(st.Now)); ok && (why != "" || !f.Generic()) {
			if why != "" {
				why = ": " + why
			}
			return withCounter(st, "string", v, fmt.Sprintf("not %s level%s", an(t.Layout.Name), why))
		}
		if why != "" {
			st.fail(NotBucket, "a number without the time key %s of layout %s, and %s", timeKey, t.Layout.Name, why)
			return st
		}
		st.Layout = *t.Layout
		st.Spec, st.SpecSource = t.Spec, t.Source
		return withLevel(st, tokens, st.Layout.FormatTime(st.Layout.Model().MissingTime(st.Now)))
	}
	if l, fit, _ := detectGCRA(st.Key, v, st.TTL, time.UnixMicro(st.Now)); fit == sureGCRA {
		st = classifyGCRA(st, l, t, v, true)
		if st.Problem == "" {
			st.Guess = guessHint("a bare number is also what deadlines, leases and counters store", l.Name)
		}
		st.Bare = true
		return st
	}
	st.Bare = true
	st.fail(NotBucket, "a number with no time key beside it (a counter? it is a bucket only where its layout is declared)")
	return withCounter(st, "string", v, "")
}

func guessHint(why, layout string) string {
	return fmt.Sprintf("a guess: %s; it is %s bucket only where that layout is declared for it", why, an(layout))
}

func fieldNames(m map[string]string) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "no fields"
	}
	return "fields " + strings.Join(names, ", ")
}

// ClassifyHash is the read path's verdict on a hash holding fields, without Redis (tests).
func ClassifyHash(key string, fields map[string]string, pttlMS, now int64, t Target) State {
	flat := make([]interface{}, 0, 2*len(fields))
	for k, v := range fields {
		flat = append(flat, k, v)
	}
	r := keyRead{typ: "hash", pttl: pttlMS, size: int64(len(fields)), hash: flat}
	if len(fields) > maxBucketFields {
		r.hash = nil
	}
	return classify(key, t, &r, now, false)
}

// ClassifyTwoKey is the verdict on a webman level and its time value, without Redis (tests).
func ClassifyTwoKey(key, value, timeValue string, pttlMS, now int64, t Target) State {
	l := Presets["webman"]
	tk, _ := l.TimeKeyOf(key)
	r := keyRead{typ: "string", pttl: pttlMS, size: int64(len(value)), str: value, hasStr: len(value) <= maxNumberLen,
		pairs: []pairKey{{key: tk, layout: &l}}, pairVals: []*string{&timeValue}}
	return classify(key, t, &r, now, false)
}

// nearestMiss says why a hash no layout fits is not a bucket, by the nearest layout.
func nearestMiss(fields map[string]string) (misfit, string) {
	extra := ""
	for _, l := range presetsOf(Hash) {
		name := l.Name
		switch m, why := l.hashFits(fields); {
		case m == notNumber:
			return m, fmt.Sprintf("has the fields of %s bucket, but %s", an(name), why)
		case m == extraFields && extra == "":
			extra = fmt.Sprintf("%s besides the fields of %s bucket", why, an(name))
		}
	}
	return extraFields, extra
}

func verdictOf(m misfit) Verdict {
	if m == extraFields {
		return ExtraFields
	}
	return NotBucket
}
