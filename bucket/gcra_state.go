package bucket

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// GCRA buckets as States. The read path (classify.go) hands a string that fits a gcra
// layout here; the State keeps the stored TAT, so that its decisions (Peek, TimeToFull) are
// the library's own (gcraDecide) and not a refill model's.
//
// A GCRA bucket stores no time of its last update, only when it will be full again. Its
// State's Stored level is the level at the read (Tokens at Now), which the linear refill
// carries forward exactly as the TAT does; Age is therefore 0.

// classifyGCRA fills st from a string value that fits gcra layout l (gcraShape is not
// notGCRA). detected says the layout was recognised without a rule.
func classifyGCRA(st State, l Layout, t Target, value string, detected bool) State {
	st.Layout, st.Detected = l, detected
	st.Spec, st.SpecSource = t.Spec, t.Source
	r, err := gcraState(l, t.Spec, st.Key, value, true, st.TTL, time.UnixMicro(st.Now))
	if err != nil {
		st.Problem = "corrupt: " + err.Error()
		return st
	}
	tat := r.TAT
	st.TAT = &tat
	st.Ahead = r.Ahead
	if st.HasSpec() {
		st.Tokens = r.Tokens
	}
	st.Stored = Level{Tokens: st.Tokens, TS: st.Now}
	return st
}

// gcraStored is the TAT a decision on the state starts from: the stored one, or, for a
// state built or changed by hand (its Tokens not the stored TAT's level), the TAT that
// leaves Tokens at Now. nil: a missing key.
func (s State) gcraStored() *TAT {
	if !s.Exists {
		return nil
	}
	now := time.UnixMicro(s.Now)
	if s.TAT != nil {
		if lv, _ := s.Layout.gcraTokens(s.Spec, *s.TAT, now); lv == s.Tokens {
			return s.TAT
		}
	}
	return s.Layout.tatFor(s.Spec, s.Tokens, now)
}

// tatFor is the TAT that leaves tokens at now (a full bucket: now itself).
func (l Layout) tatFor(spec Spec, tokens float64, now time.Time) *TAT {
	t := l.lib().tatFor(l, spec, math.Max(0, math.Min(spec.Capacity, tokens)), now)
	return &t
}

// gcraDecision is the library's answer to a request of cost on a bucket holding stored
// (nil: missing) at now (µs), as a Decision: Allowed as the library decides (a fractional
// cost is rounded up to the whole tokens the libraries take), Remaining the exact level
// before the request, ResetAfter until full, RetryAfter the true wait (-1: never) and
// AppRetryAfter the one the library replies (redis_rate and redis-gcra reply a finite wait
// for a cost above capacity, which never succeeds).
func (l Layout) gcraDecision(spec Spec, stored *TAT, now int64, cost float64) Decision {
	at := time.UnixMicro(now)
	n := int(math.Ceil(math.Max(0, cost)))
	level, ahead := spec.Capacity, time.Duration(0)
	if stored != nil {
		level, ahead = l.gcraTokens(spec, *stored, at)
	}
	d := Decision{Result: Result{Spec: spec, Remaining: level}, Ahead: ahead, AppReports: true}
	gd, err := l.gcraDecide(spec, stored, at, n)
	if err != nil {
		d.RetryAfter, d.AppRetryAfter = -1, -1
		return d
	}
	if full, err := l.gcraDecide(spec, stored, at, 0); err == nil {
		d.ResetAfter = max(0, full.ResetAfter)
	}
	d.Allowed = gd.Allowed
	if !gd.Allowed {
		d.RetryAfter, d.AppRetryAfter = gd.Wait, gd.AppRetryAfter
		if float64(n) > spec.Capacity {
			d.RetryAfter = -1
		}
	}
	return d
}

// gcraResetNow is the server's time for the GCRA writes among ops: a TAT is a time, so the
// value written depends on now, taken just before the writes (not at the read: a prompt may
// have passed since). The zero time when no op writes a GCRA level.
func (s *Store) gcraResetNow(ctx context.Context, ops []ResetOp) (time.Time, error) {
	need := false
	for _, op := range ops {
		need = need || (op.Layout.Type == GCRA && !op.To.Delete)
	}
	switch {
	case !need:
		return time.Time{}, nil
	case s.now != nil:
		return s.now(), nil
	}
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		s.networkErr(err)
		return time.Time{}, fmt.Errorf("reset: server time: %w", err)
	}
	return t, nil
}

// gcraResetArgs are the reset script's arguments for a GCRA bucket: the library's TAT
// form (its unit, float flag, range and the layout's epoch) and TTL bounds (gcraTTLBounds)
// the script re-checks, and for a level the value and TTL gcraReset gives (a full bucket
// is a delete: no library stores one). clientNow is now in microseconds for the script's
// check when the Store keeps a client clock, "" for the server's TIME.
func gcraResetArgs(op ResetOp, now time.Time, clientNow string) ([]string, []interface{}, error) {
	mode, value, ttl := "delete", "", ""
	if !op.To.Delete {
		w, err := op.Layout.gcraReset(op.Spec, op.To.Tokens, now)
		if err != nil {
			return nil, nil, err
		}
		if !w.Delete {
			mode, value, ttl = "set", w.Value, strconv.FormatInt(w.TTL.Milliseconds(), 10)
		}
	}
	lib := op.Layout.lib()
	if lib == nil {
		return nil, nil, notGCRALayout(op.Layout)
	}
	lo, hi := lib.scriptRange()
	float := ""
	if op.Layout.FloatTime {
		float = "1"
	}
	below, above := op.Layout.gcraTTLBounds()
	args := []interface{}{mode, string(GCRA), lo, strconv.FormatInt(op.Layout.Epoch, 10),
		strconv.FormatInt(below.Microseconds(), 10), strconv.FormatInt(above.Microseconds(), 10),
		value, string(op.Layout.TimeUnit), float, ttl, clientNow, hi, declaredArg(op)}
	return []string{op.Key}, args, nil
}
