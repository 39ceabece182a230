package bucket

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// The shape rule (see doc.go): a key is a bucket of a layout only if its whole shape fits;
// scripts/reset.lua applies the same rule in the script that changes the key.

// maxBucketFields is the most fields any bucket hash holds (the native layout's six). A read
// fetches the fields of no larger hash, so an application's big hash costs one HLEN.
const maxBucketFields = 6

// fieldSet is the field names of a hash layout: required, and optional (the native counters).
func (l Layout) fieldSet() (required, optional []string) {
	if l.Type != Hash {
		return nil, nil
	}
	if l.Native {
		return []string{"tokens", "ts", "capacity", "rate"}, []string{"allowed", "denied"}
	}
	if h, ok := l.Model().(hashModel); ok {
		return []string{l.TokensField, l.TimeField}, h.extraFields()
	}
	return []string{l.TokensField, l.TimeField}, nil
}

// hashFits reports whether a hash with these fields has the shape of a bucket of layout l:
// every required field, no field but the optional ones besides, each of the number
// grammar's form (number.go; a value that overflows has the shape, and classify calls it
// corrupt). It says why not.
func (l Layout) hashFits(fields map[string]string) (misfit, string) {
	req, opt := l.fieldSet()
	for _, f := range req {
		if _, ok := fields[f]; !ok {
			return missingField, fmt.Sprintf("has no %s field", f)
		}
	}
	if len(fields) > len(req) {
		var extra []string
		for f := range fields {
			if !contains(req, f) && !contains(opt, f) {
				extra = append(extra, f)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return extraFields, "also holds " + limitList(extra, 4)
		}
	}
	for f, v := range fields {
		if _, ok := parseNumberForm(v); !ok {
			return notNumber, fmt.Sprintf("field %s is not a number", f)
		}
	}
	return fits, ""
}

// misfit is why a hash does not fit a layout's fields.
type misfit uint8

const (
	fits misfit = iota
	missingField
	extraFields
	notNumber
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func limitList(names []string, n int) string {
	if len(names) > n {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.Join(names, ", ")
}

// detectHash returns the first preset, in registry order, whose exact shape the hash has.
// A layout that stores whole seconds does not fit a time with a fraction.
func detectHash(fields map[string]string) (Layout, bool) {
	for _, l := range presetsOf(Hash) {
		if m, _ := l.hashFits(fields); m != fits {
			continue
		}
		if !l.FloatTime && l.TimeUnit == unitS && strings.ContainsAny(fields[l.TimeField], ".eE") {
			continue
		}
		return l, true
	}
	return Layout{}, false
}

// corruptValue describes a stored value that has a bucket's shape but cannot be one's:
// infinite after parsing (it overflowed), or negative where the model forbids it.
func corruptValue(name string, v float64, allowNegative bool) string {
	switch {
	case math.IsInf(v, 0):
		return fmt.Sprintf("%s %+v (overflows a float)", name, v)
	case v < 0 && !allowNegative:
		return fmt.Sprintf("%s %v is negative", name, v)
	}
	return ""
}

// an is name with its article: "an express", "a webman".
func an(name string) string {
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// Verdict is what a read found a key to be when it is not a readable bucket.
type Verdict uint8

const (
	Readable    Verdict = iota
	NotBucket           // not a bucket at all
	ExtraFields         // a hash holding a bucket layout's fields and others
	Corrupt             // a bucket's shape holding values no bucket holds
	dropped             // a scanned key to leave out (vanished, or a time key)
)

var verdictText = [...]string{"", "not a bucket: ", "not a bucket: ", "corrupt: ", "drop"}

// fail sets st's Verdict and its Problem, the verdict's text and why.
func (st *State) fail(v Verdict, format string, args ...any) {
	st.Verdict, st.Problem = v, verdictText[v]+fmt.Sprintf(format, args...)
}

// why is the Problem without its verdict's text.
func (s State) why() string { return s.Problem[len(verdictText[s.Verdict]):] }

// IsNotBucket reports whether the key is not a bucket at all (not a corrupt one).
func (s State) IsNotBucket() bool { return s.Verdict == NotBucket || s.Verdict == ExtraFields }

// HasExtraFields reports whether the key is a hash holding a bucket layout's fields plus
// others (another application's data under a bucket's key, or an unknown layout).
func (s State) HasExtraFields() bool { return s.Verdict == ExtraFields }
