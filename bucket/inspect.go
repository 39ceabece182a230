package bucket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// Target says how to read one key: its layout (nil: detect it) and spec (zero: unknown,
// or stored in the bucket for the native layout).
type Target struct {
	Layout *Layout
	Spec   Spec
	// Cost is the cost a check assumes (default 1).
	Cost float64
	// Source says where the layout and spec came from (a rule name, "flags", ...).
	Source string
}

// Resolver maps a key to its Target; rules from the config file and flags implement it.
type Resolver func(key string) Target

// State is a bucket as read from Redis, refilled to the server's now when its spec is known.
type State struct {
	Key string
	// Type is the Redis type of the key: hash, string, none, list, ...
	Type   string
	Exists bool
	// Layout is the layout used to read it; Detected says it was recognised, not configured.
	Layout   Layout
	Detected bool
	// Problem is set when the key is not a readable bucket (another type, unknown fields).
	Problem string
	// Stored is the level as stored: tokens at the last update.
	Stored Level
	// Now is the Redis server time of the read (microseconds).
	Now int64
	// Spec is the known spec; SpecSource is "bucket", a rule name, "flags" or "" (unknown).
	Spec       Spec
	SpecSource string
	// Tokens is the level refilled to Now (only when the spec is known).
	Tokens float64
	// TTL is the key's time to live: -1 no TTL, -2 no key.
	TTL time.Duration
	// Allowed and Denied are the native decision counters.
	Allowed, Denied int64
	// Ahead is how far the stored time is ahead of the server's Now (0 when it is not):
	// written by a client whose clock runs fast.
	Ahead time.Duration
}

// HasSpec reports whether capacity and rate are known.
func (s State) HasSpec() bool { return !s.Spec.IsZero() }

// Age is how long ago the bucket was last updated.
func (s State) Age() time.Duration {
	if !s.Exists || s.Stored.TS == 0 {
		return 0
	}
	return time.Duration(s.Now-s.Stored.TS) * time.Microsecond
}

// Fill is Tokens/Capacity in [0,1] (0 when the spec is unknown).
func (s State) Fill() float64 {
	if !s.HasSpec() {
		return 0
	}
	return s.Tokens / s.Spec.Capacity
}

// TimeToFull is how long until the bucket is full (0 when the spec is unknown).
func (s State) TimeToFull() time.Duration {
	if !s.HasSpec() {
		return 0
	}
	return s.decide(0).ResetAfter
}

// UpdatedAt is the time of the last update.
func (s State) UpdatedAt() time.Time { return time.UnixMicro(s.Stored.TS) }

// Peek is the decision a request of cost would get now, computed from the state.
func (s State) Peek(cost float64) (Result, error) {
	if !s.HasSpec() {
		return Result{}, fmt.Errorf("%w: %q: pass --capacity and --rate or add a rule", ErrNoSpec, s.Key)
	}
	if s.Problem != "" {
		return Result{}, fmt.Errorf("%w: %q %s", ErrWrongType, s.Key, s.Problem)
	}
	return s.decide(cost).Result, nil
}

type keyCmds struct {
	typ     *redis.StatusCmd
	pttl    *redis.DurationCmd
	hash    *redis.MapStringStringCmd
	tokens  *redis.StringCmd
	timeKey *redis.StringCmd
}

// Inspect reads many buckets in one pipelined round trip (plus the server's TIME in the same
// pipeline) and returns their states in the order of keys. Keys whose layout is unknown are
// detected from their fields. Nothing is written.
func (s *Store) Inspect(ctx context.Context, keys []string, resolve Resolver) ([]State, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	targets := make([]Target, len(keys))
	cmds := make([]keyCmds, len(keys))
	pipe := s.rdb.Pipeline()
	timeCmd := pipe.Time(ctx)
	for i, k := range keys {
		if resolve != nil {
			targets[i] = resolve(k)
		}
		l := targets[i].Layout
		c := &cmds[i]
		c.typ = pipe.Type(ctx, k)
		c.pttl = pipe.PTTL(ctx, k)
		if l == nil || l.Type == Hash {
			c.hash = pipe.HGetAll(ctx, k)
		}
		if l == nil || l.Type == Strings {
			suffix := Presets["webman"].TimeSuffix
			if l != nil {
				suffix = l.TimeSuffix
			}
			c.tokens = pipe.Get(ctx, k)
			c.timeKey = pipe.Get(ctx, k+suffix)
		}
	}
	_, err := pipe.Exec(ctx)
	if err != nil && !isPerCommand(err) {
		s.networkErr(err)
		return nil, err
	}
	now := time.Now().UnixMicro()
	if t, err := timeCmd.Result(); err == nil {
		now = t.UnixMicro()
	} else if !isPerCommand(err) {
		return nil, err
	}
	if s.now != nil {
		now = s.now().UnixMicro()
	}
	out := make([]State, len(keys))
	for i, k := range keys {
		st, err := readState(k, targets[i], &cmds[i], now)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

// isPerCommand reports whether a pipeline error is a reply error of one command (WRONGTYPE
// on a guessed read, a missing key) rather than one that fails the whole read.
func isPerCommand(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return true
	}
	var re redis.Error
	return errors.As(err, &re) && !failsRead(err)
}

// failsRead recognises the reply errors that fail every command of a read: the server is
// loading or the cluster is down, the connection is not authenticated, or the ACL refuses
// a command the read needs (NOPERM: a permission error, returned as such, not a failure to
// reach the server).
func failsRead(err error) bool {
	if redis.IsPermissionError(err) {
		return true
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "CLUSTERDOWN") ||
		strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS")
}

func readState(key string, t Target, c *keyCmds, now int64) (State, error) {
	st := State{Key: key, Now: now, TTL: -2}
	typ, err := c.typ.Result()
	if err != nil {
		return st, err
	}
	st.Type = typ
	st.Exists = typ != "none"
	if d, err := c.pttl.Result(); err == nil {
		st.TTL = d
	}
	var fields map[string]string
	hasTimeKey := false
	var timeVal string
	if c.hash != nil && typ == "hash" {
		if fields, err = c.hash.Result(); err != nil {
			return st, err
		}
	}
	if c.timeKey != nil {
		if v, err := c.timeKey.Result(); err == nil {
			hasTimeKey, timeVal = true, v
		} else if !errors.Is(err, redis.Nil) && !isPerCommand(err) {
			return st, err
		}
	}
	layout := t.Layout
	switch {
	case typ == "none" && !hasTimeKey:
		if layout == nil {
			l := NativeLayout
			layout = &l
		}
	case typ != "hash" && typ != "string" && typ != "none":
		st.Problem = fmt.Sprintf("holds a %s, not a bucket", typ)
	case layout == nil:
		l, ok := Detect(typ, fields, hasTimeKey)
		if !ok {
			if typ == "string" {
				st.Problem = "is a plain string with no companion time key, not a known bucket layout"
			} else {
				st.Problem = "is a hash without the fields of a known bucket layout (" + fieldNames(fields) + ")"
			}
			break
		}
		layout, st.Detected = &l, true
	case layout.Type == Hash && typ == "string", layout.Type == Strings && typ == "hash":
		st.Problem = fmt.Sprintf("is a %s, but layout %s stores buckets as %s", typ, layout.Name, layout.Type)
	}
	if st.Problem != "" {
		return st, nil
	}
	st.Layout = *layout
	st.Spec, st.SpecSource = t.Spec, t.Source
	st.Exists = st.Exists || hasTimeKey

	var tokensStr, tsStr string
	var haveTokens bool
	if layout.Type == Hash {
		tokensStr, haveTokens = fields[layout.TokensField]
		tsStr = fields[layout.TimeField]
		if layout.Native {
			if st.Spec.IsZero() {
				c, _ := strconv.ParseFloat(fields["capacity"], 64)
				r, _ := strconv.ParseFloat(fields["rate"], 64)
				if c > 0 && r > 0 {
					st.Spec, st.SpecSource = Spec{Capacity: c, Rate: r}, "bucket"
				}
			}
			st.Allowed, _ = strconv.ParseInt(fields["allowed"], 10, 64)
			st.Denied, _ = strconv.ParseInt(fields["denied"], 10, 64)
		}
	} else if c.tokens != nil {
		if v, err := c.tokens.Result(); err == nil {
			tokensStr, haveTokens = v, true
		}
		tsStr = timeVal
	}
	if st.Exists && st.Type == "hash" && (!haveTokens || tsStr == "") {
		st.Problem = fmt.Sprintf("is missing the %s layout's tokens or time field", layout.Name)
		return st, nil
	}
	if !st.Exists || !haveTokens {
		// A missing bucket (or a strings bucket without its tokens key) starts full.
		st.Stored = Level{Tokens: st.Spec.Capacity, TS: now}
		if tsStr != "" {
			st.Stored.TS, _ = layout.ParseTime(tsStr)
		}
	} else {
		tok, err := strconv.ParseFloat(tokensStr, 64)
		if err != nil || !finite(tok) {
			st.Problem = fmt.Sprintf("has tokens %q, not a number", tokensStr)
			return st, nil
		}
		ts, err := layout.ParseTime(tsStr)
		if err != nil {
			st.Problem = "has " + err.Error()
			return st, nil
		}
		st.Stored = Level{Tokens: tok, TS: ts}
	}
	if st.Exists && st.Stored.TS > now {
		st.Ahead = time.Duration(st.Stored.TS-now) * time.Microsecond
	}
	if st.HasSpec() {
		st.Tokens = layout.Level(st.Spec, st.Stored, now).Tokens
	} else {
		st.Tokens = st.Stored.Tokens
	}
	return st, nil
}

func fieldNames(m map[string]string) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) > 6 {
		names = append(names[:6], "…")
	}
	return "fields: " + strings.Join(names, ", ")
}

// ResetTo says what a reset leaves behind.
type ResetTo struct {
	// Delete removes the bucket's keys; every layout reads a missing bucket as full.
	Delete bool
	// Tokens is the level to write when not deleting.
	Tokens float64
}

// Reset sets the bucket at key to what says, in the layout's own field names and time unit,
// atomically (both keys of a strings layout together). A key holding another Redis type is
// refused and left as it is. Returns the number of keys written or deleted.
func (s *Store) Reset(ctx context.Context, key string, layout Layout, spec Spec, to ResetTo) (int64, error) {
	if !to.Delete {
		if !finite(to.Tokens) || to.Tokens < 0 {
			return 0, fmt.Errorf("%w: tokens %v: must be a finite number >= 0", ErrInvalid, to.Tokens)
		}
		if !spec.IsZero() && to.Tokens > spec.Capacity {
			return 0, fmt.Errorf("%w: tokens %v exceeds capacity %v", ErrInvalid, to.Tokens, spec.Capacity)
		}
	}
	mode := "set"
	if to.Delete {
		mode = "delete"
	}
	ttl := ""
	if !spec.IsZero() && !to.Delete && layout.Native {
		grace := int64(60000)
		if s.grace != "" {
			grace, _ = strconv.ParseInt(s.grace, 10, 64)
		}
		ttl = strconv.FormatInt(int64(math.Ceil(float64(spec.Wait(to.Tokens, spec.Capacity))/1e6))+grace, 10)
	}
	now := ""
	if s.now != nil {
		now = strconv.FormatInt(s.now().UnixMicro(), 10)
	}
	float := "0"
	if layout.FloatTime {
		float = "1"
	}
	args := []interface{}{mode, string(layout.Type), layout.TokensField, layout.TimeField,
		FormatTokens(to.Tokens), string(layout.TimeUnit), float, ttl, now}
	if layout.Native && !spec.IsZero() {
		args = append(args, "capacity", fmtFloat(spec.Capacity), "rate", fmtFloat(spec.Rate))
	}
	keys := layout.Keys(key)
	n, err := resetScript.Run(ctx, s.rdb, keys, args...).Int64()
	if err != nil && len(keys) == 2 && strings.HasPrefix(err.Error(), "CROSSSLOT") {
		return 0, fmt.Errorf("%q and %q are in different cluster slots, and a reset writes both at once: "+
			"on a Cluster, give such keys a {hash tag}, so that KEY and KEY%s share a slot (%w)", keys[0], keys[1], layout.TimeSuffix, err)
	}
	if err != nil {
		s.networkErr(err)
		if strings.Contains(err.Error(), "WRONGTYPE") {
			msg := err.Error()
			if i := strings.Index(msg, "bucketctl: "); i >= 0 {
				msg = msg[i+len("bucketctl: "):]
			}
			return 0, fmt.Errorf("%w: %s", ErrWrongType, msg)
		}
		return 0, scriptErr(key, err)
	}
	return n, nil
}

var resetScript = redis.NewScript(scripts.Reset)
