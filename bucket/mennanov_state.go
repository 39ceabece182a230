package bucket

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The json layouts' state: mennanov/limiters' TokenBucketRedis keeps one string at
// "{PREFIX}state" (redisKey, tokenbucket.go:447-449) holding json.Marshal of its state and
// version (tokenbucket.go:633-642), field order and all.

const (
	jsonStatePrefix = `{"state":{"Last":`
	jsonKeyPrefix   = "{"
	jsonKeySuffix   = "}state"
	// maxJSONVersion bounds a stored version: the reset script increments it as digits,
	// and the owner reads it into an int64.
	maxJSONVersion = 1e18
)

// jsonState is one stored state: Last in Unix ns, Available whole tokens, the version
// the owner's optimistic check compares.
type jsonState struct {
	Last, Available, Version int64
}

// parseJSONState reads v when it is exactly what the owner writes: its field order, no
// spaces, canonical non-negative integers; ok is false for anything else.
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

// isJSONKey says key is named as the owner names its state: {PREFIX}state.
func isJSONKey(key string) bool {
	return len(key) > len(jsonKeyPrefix)+len(jsonKeySuffix) && strings.HasPrefix(key, jsonKeyPrefix) && strings.HasSuffix(key, jsonKeySuffix)
}

// validateJSON checks a json layout is the form the preset reads.
func (l Layout) validateJSON() error {
	if l.TimeUnit != unitNS || l.FloatTime {
		return fmt.Errorf("%w: layout %q: a json layout stores integer nanoseconds: set time_unit ns", ErrInvalid, l.Name)
	}
	return nil
}

// jsonPresets are the json presets, in registry order.
func jsonPresets() []Layout { return presetsOf(JSON) }

// classifyJSON reads a string that may be a json layout's state; handled is false when
// neither a json layout is declared for the key nor the value has the state's form.
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
	case !ok || !declared && (!isJSONKey(st.Key) || len(jsonPresets()) == 0):
		return st, false
	}
	if declared {
		st.Layout = *t.Layout
	} else {
		st.Layout, st.Detected = jsonPresets()[0], true
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
	// Last in whole µs, rounded up: the level the model sees is never ahead of the owner's.
	// The owner reads a zero state (its Reset's) as full (tokenbucket.go:105-108): the
	// refill from Last 0 fills it at any now, in the model too.
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

// jsonResetArgs are the reset script's arguments for a json bucket (scripts/reset.lua):
// the script re-reads the state, keeps a later Last, and writes the version plus one, so
// that a decision the owner read before the reset fails its optimistic check.
func jsonResetArgs(op ResetOp, ttl, clientNow string) ([]string, []interface{}, error) {
	mode, tokens := "delete", ""
	if !op.To.Delete {
		mode, tokens = "set", strconv.FormatInt(int64(op.To.Tokens), 10)
	}
	keep := "1"
	if !op.Layout.KeepsLaterTime() {
		keep = "0"
	}
	args := []interface{}{mode, string(JSON), "", "", "", "", tokens, "", "", ttl, clientNow, keep, declaredArg(op)}
	return []string{op.Key}, args, nil
}

// legacyResetArgs are the reset script's arguments for a bucket of the two-key form
// (mennanov-legacy): as a json bucket's, over its two keys and its version key, which the
// script increments where it exists, as the owner's SetState does (v1.13.0 :479-488).
// ok is false for other layouts.
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
