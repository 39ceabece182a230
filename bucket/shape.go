package bucket

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// maxBucketFields is the most fields any bucket hash holds: a read fetches no larger hash.
const maxBucketFields = 6

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

// hashFits says whether a hash with these fields has the shape of a bucket of l, and why not.
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
			if !slices.Contains(req, f) && !slices.Contains(opt, f) {
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

type misfit uint8

const (
	fits misfit = iota
	missingField
	extraFields
	notNumber
)

func limitList(names []string, n int) string {
	if len(names) > n {
		return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
	}
	return strings.Join(names, ", ")
}

// detectHash returns the first preset, in registry order, whose exact shape the hash has.
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

// corruptValue says why a stored value of a bucket's shape cannot be one's ("": it can).
func corruptValue(name string, v float64, allowNegative bool) string {
	switch {
	case math.IsInf(v, 0):
		return fmt.Sprintf("%s %+v (overflows a float)", name, v)
	case v < 0 && !allowNegative:
		return fmt.Sprintf("%s %v is negative", name, v)
	}
	return ""
}

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

func (st *State) fail(v Verdict, format string, args ...any) {
	st.Verdict, st.Problem = v, verdictText[v]+fmt.Sprintf(format, args...)
}

func (s State) why() string { return s.Problem[len(verdictText[s.Verdict]):] }

// IsNotBucket reports whether the key is not a bucket at all (not a corrupt one).
func (s State) IsNotBucket() bool { return s.Verdict == NotBucket || s.Verdict == ExtraFields }

// HasExtraFields reports whether the key is a hash holding a bucket layout's fields plus others.
func (s State) HasExtraFields() bool { return s.Verdict == ExtraFields }
