package bucket

import (
	"strconv"
	"strings"
	"time"
)

// mennanov/limiters' TokenBucketRedis keeps json.Marshal of its state and version at
// "{PREFIX}state" (tokenbucket.go:447-449, 633-642), field order and all.
const (
	jsonStatePrefix = `{"state":{"Last":`
	jsonKeyPrefix   = "{"
	jsonKeySuffix   = "}state"
	maxJSONVersion  = 1e18 // reset.lua increments it as digits; the owner reads an int64
)

// jsonState: Last in Unix ns, Available whole tokens, the version of the owner's optimistic check.
type jsonState struct {
	Last, Available, Version int64
}

// parseJSONState reads v only when it is exactly what the owner writes.
func parseJSONState(v string) (s jsonState, ok bool) {
	rest, ok := strings.CutPrefix(v, jsonStatePrefix)
	if !ok {
		return s, false
	}
	var nums [3]int64
	for i, sep := range []string{`,"Available":`, `},"version":`, "}"} {
		d, after, found := strings.Cut(rest, sep)
		n, err := strconv.ParseInt(d, 10, 64)
		if !found || err != nil || n < 0 || strconv.FormatInt(n, 10) != d {
			return s, false
		}
		nums[i], rest = n, after
	}
	return jsonState{Last: nums[0], Available: nums[1], Version: nums[2]}, rest == ""
}

func isJSONKey(key string) bool {
	return len(key) > len(jsonKeyPrefix)+len(jsonKeySuffix) && strings.HasPrefix(key, jsonKeyPrefix) && strings.HasSuffix(key, jsonKeySuffix)
}

// classifyJSON reads a string that may be a json layout's state; false: no json layout is
// declared for the key and the value does not have the state's form.
func classifyJSON(st State, t Target, v string) (State, bool) {
	declared := t.Layout != nil && t.Layout.Type == JSON
	if !declared && (t.Layout != nil || !strings.HasPrefix(v, jsonStatePrefix)) {
		return st, false
	}
	js, ok := parseJSONState(v)
	switch {
	case declared && !ok:
		st.fail(NotBucket, "a string that is not %s's state (%s...)", t.Layout.Name, jsonStatePrefix)
		return withCounter(st, "string", v, ""), true
	case !ok || !declared && (!isJSONKey(st.Key) || len(presetsOf(JSON)) == 0):
		return st, false
	}
	if declared {
		st.Layout = *t.Layout
	} else {
		st.Layout, st.Detected = presetsOf(JSON)[0], true
		st.Guess = guessHint("a JSON state of this form is also what an application's own value may hold", st.Layout.Name)
	}
	st.Spec, st.SpecSource = t.Spec, t.Source
	if js.Version >= maxJSONVersion {
		st.fail(Corrupt, "version %d is beyond any count of writes", js.Version)
		return st, true
	}
	if js.Available > maxTokens {
		st.fail(Corrupt, "Available %d is beyond any bucket's capacity", js.Available)
		return st, true
	}
	// Last rounded up to µs: the model's level is never ahead of the owner's. A zero state
	// (the owner's Reset) refills to full from Last 0, as tokenbucket.go:105-108 reads it.
	st.Stored = Level{Tokens: float64(js.Available), TS: ceilDiv(js.Last, 1000)}
	if st.Stored.TS > st.Now {
		st.Ahead = time.Duration(st.Stored.TS-st.Now) * time.Microsecond
	}
	st.Tokens = st.Stored.Tokens
	if st.HasSpec() {
		st.Tokens = st.Layout.Level(st.Spec, st.Stored, st.Now).Tokens
	}
	return st, true
}

// jsonResetArgs: reset.lua writes the version plus one, so that a decision the owner read
// before the reset fails its optimistic check.
func jsonResetArgs(op ResetOp, ttl, clientNow string) ([]string, []interface{}, error) {
	tokens := ""
	if !op.To.Delete {
		tokens = strconv.FormatInt(int64(op.To.Tokens), 10)
	}
	args := []interface{}{resetMode(op), string(JSON), "", "", "", "", tokens, "", "", ttl, clientNow,
		either(op.Layout.KeepsLaterTime(), "1", "0"), declaredArg(op)}
	return []string{op.Key}, args, nil
}

// legacyResetArgs are jsonResetArgs over mennanov-legacy's keys plus its version key, which
// the script increments where it exists, as SetState does (v1.13.0 :479-488).
func legacyResetArgs(op ResetOp, ttl, clientNow string) ([]string, []interface{}, bool) {
	if _, ok := op.Layout.Model().(mennanovModel); !ok || op.Layout.Type != Strings {
		return nil, nil, false
	}
	keys := op.Layout.Keys(op.Key)
	if base, ok := strings.CutSuffix(op.Key, "available"); ok && len(keys) == 2 {
		keys = append(keys, base+"version")
	}
	_, args, _ := jsonResetArgs(op, ttl, clientNow)
	args[1] = "mennanov-keys"
	return keys, args, true
}
