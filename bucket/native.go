package bucket

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A native bucket is nativeTag, then its fields packed as scripts/number.lua packs them.
const (
	nativeTag = "bucketctl:v1:"
	nativeLen = len(nativeTag) + 1 + 8 + 8 + 7 + 7 + 8 + 8 + 4

	offLast     = len(nativeTag)
	offTokens   = offLast + 1
	offTS       = offTokens + 8
	offAllowed  = offTS + 8
	offDenied   = offAllowed + 7
	offCapacity = offDenied + 7
	offRate     = offCapacity + 8
	offExpires  = offRate + 8
)

// NativeValues are the values a native bucket stores.
type NativeValues struct {
	Tokens, TS, Capacity, Rate, Allowed, Denied float64
	Last                                        bool   // the last decision allowed its request
	Expires                                     uint32 // a Unix second before which the key's TTL does not run out (0: unknown)
}

// EncodeNative is the value the native scripts write for v.
func EncodeNative(v NativeValues) string {
	b := make([]byte, nativeLen)
	copy(b, nativeTag)
	if v.Last {
		b[offLast] = 1
	}
	le := binary.LittleEndian
	le.PutUint64(b[offTokens:], math.Float64bits(v.Tokens))
	le.PutUint64(b[offTS:], math.Float64bits(v.TS))
	putUint56(b[offAllowed:], v.Allowed)
	putUint56(b[offDenied:], v.Denied)
	le.PutUint64(b[offCapacity:], math.Float64bits(v.Capacity))
	le.PutUint64(b[offRate:], math.Float64bits(v.Rate))
	le.PutUint32(b[offExpires:], v.Expires)
	return string(b)
}

func putUint56(b []byte, f float64) {
	u := uint64(f)
	for i := range 7 {
		b[i] = byte(u >> (8 * i))
	}
}

func uint56(s string) float64 {
	var u uint64
	for i := 6; i >= 0; i-- {
		u = u<<8 | uint64(s[i])
	}
	return float64(u)
}

func float64At(s string, i int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64([]byte(s[i : i+8])))
}

// IsNativeValue reports whether a string value carries the native bucket's tag.
func IsNativeValue(v string) bool { return strings.HasPrefix(v, nativeTag) }

// DecodeNative reads a native bucket's value; problem says why it is corrupt.
func DecodeNative(v string) (NativeValues, string) {
	if !IsNativeValue(v) || len(v) != nativeLen {
		return NativeValues{}, fmt.Sprintf("the value after the tag is %d bytes, not %d", len(v)-len(nativeTag), nativeLen-len(nativeTag))
	}
	n := NativeValues{Tokens: float64At(v, offTokens), TS: float64At(v, offTS),
		Allowed: uint56(v[offAllowed:]), Denied: uint56(v[offDenied:]),
		Capacity: float64At(v, offCapacity), Rate: float64At(v, offRate),
		Last: v[offLast] == 1, Expires: binary.LittleEndian.Uint32([]byte(v[offExpires:]))}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch {
	case !(n.Tokens >= 0 && n.Tokens <= maxTokens):
		return n, "tokens " + g(n.Tokens) + " is out of range"
	case !(n.TS >= 0 && n.TS <= maxTime):
		return n, "ts " + g(n.TS) + " is not a time"
	case !(n.Capacity > 0 && n.Capacity <= maxCapacity):
		return n, "capacity " + g(n.Capacity) + " is out of range"
	case !(n.Rate > 0 && !math.IsInf(n.Rate, 0) && n.Capacity/n.Rate <= maxRefill.Seconds()):
		return n, "rate " + g(n.Rate) + " is out of range"
	case n.Allowed > maxCounter:
		return n, "allowed " + g(n.Allowed) + " is out of range"
	case n.Denied > maxCounter:
		return n, "denied " + g(n.Denied) + " is out of range"
	}
	return n, ""
}

// classifyNative is the State of a string holding the native tag.
func classifyNative(st State, t Target, v string) State {
	if t.Layout != nil && !t.Layout.Native {
		st.fail(NotBucket, "a native bucket's tagged string, but layout %s is declared for it", t.Layout.Name)
		return st
	}
	st.Layout, st.Detected = NativeLayout, t.Layout == nil
	st.Spec, st.SpecSource = t.Spec, t.Source
	n, problem := DecodeNative(v)
	if problem != "" {
		st.fail(Corrupt, "%s", problem)
		return st
	}
	st.Spec, st.SpecSource = Spec{Capacity: n.Capacity, Rate: n.Rate}, "bucket"
	st.Allowed, st.Denied = counter(n.Allowed), counter(n.Denied)
	ts, _ := st.Layout.timeOf(n.TS)
	return withLevelAt(st, n.Tokens, ts)
}

// nativeResetArgs are the reset script's KEYS and ARGV for a native bucket, tagged or hash.
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
