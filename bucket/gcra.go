package bucket

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// gcraLib is one GCRA library's arithmetic, followed to the letter. Times are the server's.
type gcraLib interface {
	tatForm
	// ttlRule: at a write, TAT − now lies in (TTL − under, TTL + over].
	ttlRule() (under, over time.Duration)
	// overdraw is how far below empty (in tokens) the library's rounding lets a request go.
	overdraw() float64
	decide(l Layout, spec Spec, stored *TAT, now time.Time, cost int) gcraAnswer
	writeTTL(l Layout, t TAT, now time.Time) time.Duration
}

// lib is the layout's GCRA library, found by Library for a custom layout.
func (l Layout) lib() (gcraLib, error) {
	if l.Type != GCRA {
		return nil, fmt.Errorf("%w: layout %q is not a gcra layout", ErrInvalid, l.Name)
	}
	if l.gcra != nil {
		return l.gcra, nil
	}
	var names []string
	for _, p := range presetsOf(GCRA) {
		if p.Library == l.Library {
			return p.gcra, nil
		}
		names = append(names, p.Library)
	}
	slices.Sort(names)
	return nil, fmt.Errorf("%w: layout %q: library %q must be one of %s", ErrInvalid, l.Name, l.Library, strings.Join(names, ", "))
}

// TAT is a GCRA bucket's stored theoretical arrival time: when the bucket is full again.
type TAT struct {
	Unix    int64   // Unix nanoseconds
	seconds float64 // as a float-seconds library reads it, since its epoch
}

func (t TAT) Time() time.Time { return time.Unix(0, t.Unix) }

func (l Layout) parseTAT(v string) (TAT, error) {
	lib, err := l.lib()
	if err != nil {
		return TAT{}, err
	}
	return lib.parse(l, v)
}

func nowNanos(now time.Time) int64 { return now.UnixMicro() * 1000 }

// gcraTokens is the level of t at now, and how far t lies beyond a full window.
func (l Layout) gcraTokens(spec Spec, t TAT, now time.Time) (tokens float64, ahead time.Duration) {
	lib, err := l.lib()
	if err != nil {
		return 0, 0
	}
	tokens, past := lib.tokens(l, spec, t, now)
	if o := lib.overdraw(); o > 0 {
		past -= time.Duration(math.Round(o / spec.Rate * 1e9))
	}
	return tokens, max(0, past)
}

// gcraAnswer is the library's answer to one request; Wait is the true wait of a denial.
type gcraAnswer struct {
	Allowed             bool
	Remaining           int
	RetryAfter          time.Duration
	ResetAfter          time.Duration
	AppRetryAfter, Wait time.Duration
	Write               bool // the library stores NewTAT with TTL
	NewTAT              TAT
	TTL                 time.Duration
}

func (l Layout) gcraDecide(spec Spec, stored *TAT, now time.Time, cost int) (gcraAnswer, error) {
	if err := spec.Validate(); err != nil {
		return gcraAnswer{}, err
	}
	if cost < 0 {
		return gcraAnswer{}, fmt.Errorf("%w: cost %d must be >= 0", ErrInvalid, cost)
	}
	lib, err := l.lib()
	if err != nil {
		return gcraAnswer{}, err
	}
	return lib.decide(l, spec, stored, now, cost), nil
}

// luaNumber is f as a Lua script returns it (tostring, %.14g).
func luaNumber(f float64) float64 {
	g, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 14, 64), 64)
	return g
}

// luaDuration is seconds as a Lua script returns them, truncated to ns.
func luaDuration(f float64) time.Duration {
	g := luaNumber(f)
	if g == -1 {
		return -1
	}
	return time.Duration(g * float64(time.Second))
}

// gcraWrite is what a reset writes: SET key Value PX TTL, or a delete for a full bucket.
type gcraWrite struct {
	Delete bool
	Value  string
	TTL    time.Duration
	TAT    TAT
}

func (l Layout) gcraReset(spec Spec, tokens float64, now time.Time) (gcraWrite, error) {
	if err := spec.Validate(); err != nil {
		return gcraWrite{}, err
	}
	if !finite(tokens) || tokens < 0 || tokens > spec.Capacity {
		return gcraWrite{}, fmt.Errorf("%w: tokens %v: must be between 0 and the capacity %v", ErrInvalid, tokens, spec.Capacity)
	}
	lib, err := l.lib()
	if err != nil {
		return gcraWrite{}, err
	}
	v, t, full, err := lib.resetTAT(l, spec, tokens, now)
	switch {
	case err != nil:
		return gcraWrite{}, err
	case full:
		return gcraWrite{Delete: true}, nil
	}
	return gcraWrite{Value: v, TAT: t, TTL: lib.writeTTL(l, t, now)}, nil
}

type gcraFit int

const (
	notGCRA   gcraFit = iota // never a bucket of the layout, whatever a rule says
	maybeGCRA                // a bucket only through a rule or --layout
	sureGCRA                 // detected without a rule
)

const (
	gcraTTLSlack  = 100 * time.Millisecond // PTTL's rounding and the time between replies
	gcraRuleSlack = time.Second            // a longer TTL under a rule (throttled's slow CAS)
)

// gcraTTLBounds: a bucket's TAT − now lies in (PTTL − below, PTTL + above].
func gcraTTLBounds(lib gcraLib) (below, above time.Duration) {
	under, over := lib.ttlRule()
	return under + gcraTTLSlack + gcraRuleSlack, gcraTTLSlack + over
}

// TTLShortfall is how much shorter than the time to full the application may set a TTL.
func (l Layout) TTLShortfall() time.Duration {
	if lib, err := l.lib(); err == nil {
		_, over := lib.ttlRule()
		return over
	}
	return 0
}

// gcraShape says how well value at key, with its PTTL, fits the layout at now, and why not.
func (l Layout) gcraShape(key, value string, pttl time.Duration, now time.Time) (gcraFit, string) {
	lib, err := l.lib()
	if err != nil {
		return notGCRA, fmt.Sprintf("layout %s does not store GCRA buckets", l.Name)
	}
	t, err := lib.parse(l, value)
	if err != nil {
		return notGCRA, err.Error()
	}
	if pttl < 0 {
		return notGCRA, fmt.Sprintf("%s bucket always has a TTL; this string has none (a counter?)", an(l.Name))
	}
	ahead := time.Duration(t.Unix - nowNanos(now))
	below, above := gcraTTLBounds(lib)
	if ahead > pttl+above {
		return notGCRA, fmt.Sprintf("%s, beyond the key's TTL of %s; %s sets the TTL to the time until full (a timestamp?)",
			tatFromNow(t, ahead), pttl, l.Library)
	}
	if ahead <= pttl-below {
		return notGCRA, fmt.Sprintf("%s, but the key's TTL is %s; %s sets the TTL to the time until full (a value with a TTL of its own?)",
			tatFromNow(t, ahead), pttl, l.Library)
	}
	if l.KeyPrefix != "" && !strings.HasPrefix(key, l.KeyPrefix) {
		return maybeGCRA, fmt.Sprintf("the key does not start with %s's prefix %q", l.Library, l.KeyPrefix)
	}
	if under, _ := lib.ttlRule(); ahead <= pttl-under-gcraTTLSlack {
		return maybeGCRA, fmt.Sprintf("%s, and the key's TTL of %s outlasts it by more than %s leaves",
			tatFromNow(t, ahead), pttl, l.Library)
	}
	return sureGCRA, ""
}

func tatFromNow(t TAT, ahead time.Duration) string {
	if ahead > -24*time.Hour && ahead < 24*time.Hour {
		return fmt.Sprintf("the TAT is %s from now", ahead.Round(time.Millisecond))
	}
	return "the TAT is " + t.Time().UTC().Format(time.RFC3339)
}

// detectGCRA finds the gcra preset value fits best: sure, own prefix, then the wider TTL rule.
func detectGCRA(key, value string, pttl time.Duration, now time.Time) (Layout, gcraFit, string) {
	var reasons []string
	var best Layout
	bestRank, bestSpan, bestWhy := 0, time.Duration(0), ""
	for _, l := range presetsOf(GCRA) {
		fit, why := l.gcraShape(key, value, pttl, now)
		if fit == notGCRA {
			reasons = append(reasons, l.Name+": "+why)
			continue
		}
		rank := 2 * int(fit)
		if l.KeyPrefix != "" && strings.HasPrefix(key, l.KeyPrefix) {
			rank++
		}
		under, over := l.gcra.ttlRule()
		if rank > bestRank || rank == bestRank && under+over > bestSpan {
			best, bestRank, bestSpan, bestWhy = l, rank, under+over, why
		}
	}
	if bestRank == 0 {
		return Layout{}, notGCRA, strings.Join(reasons, "; ")
	}
	return best, gcraFit(bestRank / 2), bestWhy
}

// gcraReading is one gcra bucket as read; Tokens and Ahead (see gcraTokens) need a spec.
type gcraReading struct {
	Exists bool
	TAT    TAT
	Fit    gcraFit
	Reason string
	Tokens float64
	Ahead  time.Duration
	TTL    time.Duration // PTTL: -1 none, -2 missing
}

func gcraState(l Layout, spec Spec, key, value string, exists bool, pttl time.Duration, now time.Time) (gcraReading, error) {
	if _, err := l.lib(); err != nil {
		return gcraReading{}, err
	}
	if err := l.Validate(); err != nil {
		return gcraReading{}, err
	}
	if !spec.IsZero() {
		if err := spec.Validate(); err != nil {
			return gcraReading{}, err
		}
	}
	r := gcraReading{Exists: exists, TTL: pttl}
	if !exists {
		r.Fit, r.TTL, r.Tokens = sureGCRA, -2, spec.Capacity
		return r, nil
	}
	if r.Fit, r.Reason = l.gcraShape(key, value, pttl, now); r.Fit == notGCRA {
		return r, nil
	}
	r.TAT, _ = l.parseTAT(value)
	if !spec.IsZero() {
		r.Tokens, r.Ahead = l.gcraTokens(spec, r.TAT, now)
	}
	return r, nil
}

// classifyGCRA fills st from a value that fits gcra layout l; Stored is the level at Now.
func classifyGCRA(st State, l Layout, t Target, value string, detected bool) State {
	st.Layout, st.Detected = l, detected
	st.Spec, st.SpecSource = t.Spec, t.Source
	r, err := gcraState(l, t.Spec, st.Key, value, true, st.TTL, time.UnixMicro(st.Now))
	if err != nil {
		st.fail(Corrupt, "%s", err)
		return st
	}
	st.TAT, st.Ahead = &r.TAT, r.Ahead
	if st.HasSpec() {
		st.Tokens = r.Tokens
	}
	st.Stored = Level{Tokens: st.Tokens, TS: st.Now}
	return st
}

// gcraStored is the TAT a decision starts from (one for Tokens where changed by hand).
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

func (l Layout) tatFor(spec Spec, tokens float64, now time.Time) *TAT {
	lib, _ := l.lib()
	t := lib.tatFor(l, spec, math.Max(0, math.Min(spec.Capacity, tokens)), now)
	return &t
}

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
	full, _ := l.gcraDecide(spec, stored, at, 0) // valid as the first
	d.ResetAfter = max(0, full.ResetAfter)
	d.Allowed = gd.Allowed
	if !gd.Allowed {
		d.RetryAfter, d.AppRetryAfter = gd.Wait, gd.AppRetryAfter
		if float64(n) > spec.Capacity {
			d.RetryAfter = -1
		}
	}
	return d
}

func (s *Store) gcraResetNow(ctx context.Context, ops []ResetOp) (time.Time, error) {
	if !slices.ContainsFunc(ops, func(op ResetOp) bool { return op.Layout.Type == GCRA && !op.To.Delete }) {
		return time.Time{}, nil
	}
	if s.now != nil {
		return s.now(), nil
	}
	t, err := s.rdb.Time(ctx).Result()
	if err != nil {
		s.networkErr(err)
		return time.Time{}, fmt.Errorf("reset: server time: %w", err)
	}
	return t, nil
}

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
	lib, err := op.Layout.lib()
	if err != nil {
		return nil, nil, err
	}
	lo, hi := lib.scriptRange()
	below, above := gcraTTLBounds(lib)
	args := []interface{}{mode, string(GCRA), lo, strconv.FormatInt(op.Layout.Epoch, 10),
		strconv.FormatInt(below.Microseconds(), 10), strconv.FormatInt(above.Microseconds(), 10),
		value, string(op.Layout.TimeUnit), either(op.Layout.FloatTime, "1", ""), ttl, clientNow, hi, declaredArg(op)}
	return []string{op.Key}, args, nil
}
