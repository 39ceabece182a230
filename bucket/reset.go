package bucket

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/scripts"
)

// ResetTo says what a reset leaves behind.
type ResetTo struct {
	Delete bool // remove the keys: every layout reads a missing bucket as full
	Tokens float64
}

// ResetOp is one bucket to reset (writing tokens needs the spec, for the TTL).
type ResetOp struct {
	Key      string
	Layout   Layout
	Spec     Spec
	To       ResetTo
	Read     *State // the bucket as read, for the TTL of a write; nil: as if missing
	Declared bool   // a rule or --layout declares the layout (a lone bare number needs it)
	Respec   bool   // Spec is written into an existing native bucket too
}

// ResetOutcome is what a reset did to one bucket; the reset script replies ResetOutcome-4.
type ResetOutcome int

const (
	ResetFailed     ResetOutcome = iota // not applied (see the error)
	ResetUndeclared                     // left untouched: a bare number no layout is declared for
	ResetCorrupt                        // left untouched: corrupt
	ResetChanged                        // left untouched: no longer a bucket of the layout
	ResetMissing                        // no key: nothing to delete
	ResetDone                           // deleted or written
	ResetCreated                        // --tokens on a missing bucket wrote a new one
)

var resetOutcomes = [...]struct{ name, text string }{
	{"failed", "failed"},
	{"undeclared", "no layout declared for it: left untouched"},
	{"corrupt", "corrupt: left untouched"},
	{"changed", "changed since it was read: left untouched"},
	{"no key", "no key"},
	{"reset", "reset"},
	{"created", "created"},
}

func (o ResetOutcome) String() string { return resetOutcomes[o].text }

// Name is the outcome as reset's output names it.
func (o ResetOutcome) Name() string { return resetOutcomes[o].name }

// Applied reports whether the bucket was deleted or written.
func (o ResetOutcome) Applied() bool { return o == ResetDone || o == ResetCreated }

var resetScript = scripts.Lazy(scripts.Reset)

// Reset resets one bucket of the layout named (so declared) and returns the keys written
// or deleted; ErrChanged when the key is not a bucket of layout.
func (s *Store) Reset(ctx context.Context, key string, layout Layout, spec Spec, to ResetTo) (int64, error) {
	return s.resetOne(ctx, ResetOp{Key: key, Layout: layout, Spec: spec, To: to, Declared: true})
}

// ResetState resets the bucket read as st (see State.ResetOp), as Reset does.
func (s *Store) ResetState(ctx context.Context, st State, to ResetTo) (int64, error) {
	op, err := st.ResetOp(to)
	if err != nil {
		return 0, err
	}
	return s.resetOne(ctx, op)
}

// ResetOp is the reset of the bucket read as s; a key that is not a bucket, or a guess, is
// refused (ErrUndeclared), the rule the reset script checks again. A refill of a native
// bucket storing its spec writes it full, keeping spec and counters.
func (s State) ResetOp(to ResetTo) (ResetOp, error) {
	switch {
	case s.Problem != "":
		return ResetOp{}, stateErr(s)
	case s.Guess != "":
		return ResetOp{}, &KeyError{Key: s.Key, Layout: s.Layout.Name,
			Err: fmt.Errorf("%q: %w (it reads as %s bucket only by a guess); left untouched", s.Key, ErrUndeclared, an(s.Layout.Name))}
	case to.Delete && s.Layout.Native && s.Exists && s.SpecSource == "bucket" && s.HasSpec():
		to = ResetTo{Tokens: s.Spec.Capacity}
	}
	return ResetOp{Key: s.Key, Layout: s.Layout, Spec: s.Spec, To: to, Read: &s, Declared: !s.Detected}, nil
}

func (s *Store) resetOne(ctx context.Context, op ResetOp) (int64, error) {
	key, layout := op.Key, op.Layout
	out, err := s.ResetMany(ctx, []ResetOp{op})
	if err != nil {
		return 0, err
	}
	switch out[0] {
	case ResetChanged:
		return 0, fmt.Errorf("%q %w", key, ErrChanged)
	case ResetCorrupt:
		return 0, fmt.Errorf("%q: %w: left untouched", key, ErrCorrupt)
	case ResetUndeclared:
		return 0, &KeyError{Key: key, Layout: layout.Name, Err: fmt.Errorf("%q: %w; left untouched", key, ErrUndeclared)}
	case ResetMissing:
		return 0, nil
	}
	return int64(len(layout.Keys(key))), nil
}

// Validate checks an op before anything is sent.
func (op ResetOp) Validate() error {
	if err := op.Layout.Validate(); err != nil {
		return err
	}
	if _, ok := op.Layout.TimeKeyOf(op.Key); op.Layout.Type == Strings && !ok {
		return fmt.Errorf("%w: %q is not named by the tokens_key %q of layout %s: name a bucket by its tokens key", ErrInvalid,
			op.Key, op.Layout.TokensKey, op.Layout.Name)
	}
	if op.To.Delete {
		return nil
	}
	if !finite(op.To.Tokens) || op.To.Tokens < 0 {
		return fmt.Errorf("%w: tokens %v: must be a finite number >= 0", ErrInvalid, op.To.Tokens)
	}
	if op.Spec.IsZero() {
		return fmt.Errorf("%w: %q: writing tokens needs the capacity and rate (for the TTL that covers the refill)", ErrNoSpec, op.Key)
	}
	if err := op.Spec.Validate(); err != nil {
		return err
	}
	if op.To.Tokens > op.Spec.Capacity {
		return fmt.Errorf("%w: tokens %v exceeds capacity %v of %q", ErrInvalid, op.To.Tokens, op.Spec.Capacity, op.Key)
	}
	return nil
}

// ResetMany resets buckets in one pipelined round trip of the reset script. Ops' errors come
// back joined (*KeyError); a lost round trip returns (nil, err), *UncertainError once sent.
func (s *Store) ResetMany(ctx context.Context, ops []ResetOp) ([]ResetOutcome, error) {
	for _, op := range ops {
		if err := op.Validate(); err != nil {
			return nil, err
		}
	}
	gcraNow, err := s.gcraResetNow(ctx, ops)
	if err != nil {
		return nil, err
	}
	var sha interface{} = resetScript().Hash()
	calls := make([]*redis.Cmd, len(ops))
	for i, op := range ops {
		keys, args, err := s.resetArgs(op, gcraNow)
		if err != nil {
			return nil, err
		}
		for len(args) > 0 && args[len(args)-1] == "" {
			args = args[:len(args)-1] // an absent ARGV reads as "" in the script
		}
		calls[i] = evalCmd(ctx, "evalsha", sha, keys, args)
	}
	out := make([]ResetOutcome, len(ops))
	if len(ops) == 0 {
		return out, nil
	}
	if _, err := sendCalls(ctx, s.rdb, calls, nil, callRW, resetRetry); err != nil {
		s.networkErr(err)
		if rediserr.IsNetwork(err) && !rediserr.NotSent(err) {
			return nil, &UncertainError{Key: ops[0].Key, Err: err, Resets: len(ops)}
		}
		return nil, err
	}
	var errs []error
	failed, noScript := false, false
	for i, call := range calls {
		n, err := call.Int64()
		switch {
		case err == nil && n >= -3 && n <= 2:
			out[i] = ResetOutcome(n + 4)
		case err == nil: // another reply: ResetFailed
		case !failed && failsRead(err):
			return nil, err // every call's: loading, cluster down, no permission
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			noScript = true
		default:
			errs = append(errs, resetErr(ops[i], err))
		}
		failed = failed || err != nil
	}
	if noScript {
		errs = append(errs, errors.New("reset: the server keeps answering NOSCRIPT"))
	}
	return out, errors.Join(errs...)
}

// KeyError is one key's error in a batch; its text is Err's. Layout is the layout to
// declare, when the error is about it (ErrUndeclared).
type KeyError struct {
	Key    string
	Err    error
	Layout string
}

func (e *KeyError) Error() string { return e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

func resetErr(op ResetOp, err error) error {
	keys := op.Layout.Keys(op.Key)
	if len(keys) == 2 && strings.HasPrefix(err.Error(), "CROSSSLOT") {
		return &KeyError{Key: op.Key, Err: fmt.Errorf("%q and %q are in different cluster slots, and a reset writes both at once: "+
			"on a Cluster, give such keys a {hash tag}, so that %s and %s share a slot (%w)", keys[0], keys[1],
			strings.Replace(op.Layout.TokensKey, "*", "KEY", 1), strings.Replace(op.Layout.TimeKey, "*", "KEY", 1), err)}
	}
	return &KeyError{Key: op.Key, Err: scriptErr(op.Key, err)}
}

// resetArgs are the reset script's KEYS and ARGV for op (scripts/doc.go).
func (s *Store) resetArgs(op ResetOp, gcraNow time.Time) ([]string, []interface{}, error) {
	l := op.Layout
	if l.Type == GCRA {
		clientNow := ""
		if s.now != nil {
			at := gcraNow
			if at.IsZero() { // deletes only: gcraResetNow took no time
				at = s.now()
			}
			clientNow = strconv.FormatInt(at.UnixMicro(), 10)
		}
		return gcraResetArgs(op, gcraNow, clientNow)
	}
	if l.Native {
		return s.nativeResetArgs(op)
	}
	if err := wholeTokens(op); err != nil {
		return nil, nil, err
	}
	ttl := ""
	if !op.To.Delete {
		ttl = strconv.FormatInt(max(s.resetTTL(op).Milliseconds(), 1), 10)
	}
	now := s.clientNow()
	if l.Type == JSON {
		return jsonResetArgs(op, ttl, now)
	}
	if keys, args, ok := legacyResetArgs(op, ttl, now); ok {
		return keys, args, nil
	}
	req, opt := l.fieldSet()
	var extraReq []string
	for _, f := range req {
		if f != l.TokensField && f != l.TimeField {
			extraReq = append(extraReq, f)
		}
	}
	args := []interface{}{resetMode(op), string(l.Type), l.TokensField, l.TimeField, strings.Join(extraReq, ","),
		strings.Join(opt, ","), l.FormatTokens(op.To.Tokens), string(l.TimeUnit), either(l.FloatTime, "1", "0"), ttl, now,
		either(l.KeepsLaterTime(), "1", "0"), declaredArg(op), either(op.Respec, "respec", ""), either(l.TimeFirst, "time-first", "")}
	if h, ok := l.Model().(hashModel); ok && !op.To.Delete {
		args[13] = "respec" // its own fields, written into an existing hash too
		args = append(args, h.resetPairs(op)...)
	}
	return l.Keys(op.Key), args, nil
}

// either is yes when cond holds, else no: one of the reset script's ARGV switches.
func either(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func resetMode(op ResetOp) string { return either(op.To.Delete, "delete", "set") }

// declaredArg is the reset script's ARGV[13].
func declaredArg(op ResetOp) string {
	if !op.Declared {
		return ""
	}
	if op.Spec.IsZero() {
		return "0"
	}
	if op.Layout.Type == Strings {
		_, lo, hi := op.Layout.loneLevelTTL(op.Spec, -1)
		return fmt.Sprintf("%s,%d,%d", fmtFloat(op.Spec.Capacity), lo, hi)
	}
	return fmtFloat(op.Spec.Capacity)
}

// resetTTL is the TTL a reset to tokens writes (Layout.ResetWrite; native: the Store's grace).
func (s *Store) resetTTL(op ResetOp) time.Duration {
	now, stored, exists := time.Now().UnixMicro(), Level{}, false
	if s.now != nil {
		now = s.now().UnixMicro()
	}
	if op.Read != nil {
		now, stored, exists = op.Read.Now, op.Read.Stored, op.Read.Exists
	}
	_, _, ttl := op.Layout.ResetWrite(op.Spec, stored, exists, now, op.To.Tokens)
	if op.Layout.Native && s.grace != "" {
		ms, _ := strconv.ParseInt(s.grace, 10, 64)
		ttl += time.Duration(ms)*time.Millisecond - resetGrace
	}
	return ttl
}

// stateErr is the refusal of a write to a key read with a Problem: corrupt, or not a bucket.
func stateErr(st State) error {
	if st.Verdict == Corrupt {
		return fmt.Errorf("%q: %w: %s (left untouched)", st.Key, ErrCorrupt, st.why())
	}
	return st.NotBucketError()
}
