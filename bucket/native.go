package bucket

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The native bucket is one string: nativeTag, then six little-endian IEEE doubles (tokens,
// ts in µs, capacity, rate, allowed, denied), exactly as the scripts' prelude packs them
// with struct.pack('<dddddd', ...) (scripts/number.lua tagged()). Identity is the tag: no
// other application writes it, so a string without it is never a native bucket.

// nativeTag starts every native bucket's value; `redis-cli GET` shows it.
const nativeTag = "bucketctl:v1:"

// nativeLen is the length of a native bucket's value (within maxNumberLen, so the page
// read transfers it as it does a number).
const nativeLen = len(nativeTag) + 6*8

// NativeValues are the values a native bucket stores.
type NativeValues struct {
	Tokens, TS, Capacity, Rate, Allowed, Denied float64
}

// EncodeNative is the value the native scripts write for v: for tests and for writers of
// native buckets outside the scripts.
func EncodeNative(v NativeValues) string {
	b := make([]byte, nativeLen)
	copy(b, nativeTag)
	for i, f := range []float64{v.Tokens, v.TS, v.Capacity, v.Rate, v.Allowed, v.Denied} {
		binary.LittleEndian.PutUint64(b[len(nativeTag)+8*i:], math.Float64bits(f))
	}
	return string(b)
}

// IsNativeValue reports whether a string value carries the native bucket's tag.
func IsNativeValue(v string) bool { return strings.HasPrefix(v, nativeTag) }

// DecodeNative reads a native bucket's value; problem is set (a "corrupt: ..." text) when
// the value after the tag is not six doubles within the ranges the scripts check.
func DecodeNative(v string) (NativeValues, string) {
	if !IsNativeValue(v) || len(v) != nativeLen {
		return NativeValues{}, fmt.Sprintf("corrupt: the value after the tag is %d bytes, not %d", len(v)-len(nativeTag), nativeLen-len(nativeTag))
	}
	var f [6]float64
	for i := range f {
		f[i] = math.Float64frombits(le64(v[len(nativeTag)+8*i:]))
	}
	n := NativeValues{f[0], f[1], f[2], f[3], f[4], f[5]}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch {
	case !(n.Tokens >= 0 && n.Tokens <= maxTokens):
		return n, "corrupt: tokens " + g(n.Tokens) + " is out of range"
	case !(n.TS >= 0 && n.TS <= maxTime):
		return n, "corrupt: ts " + g(n.TS) + " is not a time"
	case !(n.Capacity > 0 && n.Capacity <= maxCapacity):
		return n, "corrupt: capacity " + g(n.Capacity) + " is out of range"
	case !(n.Rate > 0 && !math.IsInf(n.Rate, 0) && n.Capacity/n.Rate <= maxRefill.Seconds()):
		return n, "corrupt: rate " + g(n.Rate) + " is out of range"
	case !(n.Allowed >= 0 && n.Allowed <= maxCounter):
		return n, "corrupt: allowed " + g(n.Allowed) + " is out of range"
	case !(n.Denied >= 0 && n.Denied <= maxCounter):
		return n, "corrupt: denied " + g(n.Denied) + " is out of range"
	}
	return n, ""
}

// classifyNative is the State of a string holding the native tag: a native bucket, or a
// corrupt one; a declared layout other than a native one makes it not a bucket of that.
func classifyNative(st State, t Target, v string) State {
	if t.Layout != nil && !t.Layout.Native {
		st.fail(NotBucket, "a native bucket's tagged string, but layout %s is declared for it", t.Layout.Name)
		return st
	}
	st.Layout, st.Detected = NativeLayout, t.Layout == nil
	st.Spec, st.SpecSource = t.Spec, t.Source
	n, problem := DecodeNative(v)
	if problem != "" {
		st.fail(Corrupt, "%s", strings.TrimPrefix(problem, verdictText[Corrupt]))
		return st
	}
	// The application's spec is the one the bucket stores (as for a native-hash bucket).
	st.Spec, st.SpecSource = Spec{Capacity: n.Capacity, Rate: n.Rate}, "bucket"
	st.Allowed, st.Denied = counter(n.Allowed), counter(n.Denied)
	// DecodeNative checked both ranges.
	ts, _ := st.Layout.timeOf(n.TS)
	return withLevelAt(st, n.Tokens, ts)
}

// nativeResetArgs are the reset script's KEYS and ARGV for a native bucket, tagged or still
// a native-hash (a set writes the tagged string): the script reads the stored spec and
// counters itself and sets the TTL from them and the grace (scripts/reset.lua).
func (s *Store) nativeResetArgs(op ResetOp) ([]string, []interface{}, error) {
	mode, tokens := "delete", ""
	if !op.To.Delete {
		mode, tokens = "set", fmtFloat(op.To.Tokens)
	}
	now := ""
	if s.now != nil {
		now = strconv.FormatInt(s.now().UnixMicro(), 10)
	}
	respec := ""
	if op.Respec {
		respec = "respec"
	}
	args := []interface{}{mode, string(Tagged), "", "", "", "", tokens, "", "", s.grace, now, "1", declaredArg(op), respec}
	if !op.To.Delete {
		args = append(args, "capacity", fmtFloat(op.Spec.Capacity), "rate", fmtFloat(op.Spec.Rate))
	}
	return []string{op.Key}, args, nil
}

// le64 is the little-endian uint64 at the start of s.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
