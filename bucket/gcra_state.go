package bucket

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// classifyGCRA fills st from a value that fits gcra layout l. The State keeps the TAT, so
// its decisions are the library's; Stored is the level at the read (Age 0).
func classifyGCRA(st State, l Layout, t Target, value string, detected bool) State {
	st.Layout, st.Detected = l, detected
	st.Spec, st.SpecSource = t.Spec, t.Source
	r, err := gcraState(l, t.Spec, st.Key, value, true, st.TTL, time.UnixMicro(st.Now))
	if err != nil {
		st.fail(Corrupt, "%s", err)
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

// gcraStored is the TAT a decision starts from: the stored one, or for a state changed by
// hand the TAT that leaves Tokens at Now; nil for a missing key.
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

// gcraDecision is the library's answer to a request of cost (rounded up to whole tokens)
// at now (µs), as a Decision; Remaining is the exact level.
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

// gcraResetNow is the server's time just before the writes, when an op writes a TAT.
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

// gcraResetArgs are the reset script's arguments for a GCRA bucket: the form and TTL bounds
// it re-checks, and the write. clientNow is "" for the server's TIME.
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
