package bucket

import (
	"fmt"
	"strings"
	"time"
)

// gcraFit says how well a stored string fits a gcra layout.
type gcraFit int

const (
	// notGCRA: the value cannot be a bucket of the layout: not a number in the library's
	// form or range, no TTL, or a TTL the library could not have set for that TAT (see
	// gcraShape). It is never written or deleted as one, also under a rule or --layout.
	notGCRA gcraFit = iota
	// maybeGCRA: a TAT of the right form with a TTL the library could have set, but the key
	// is outside the library's key prefix, or its TTL outlasts the TAT by more than the
	// library's own rounding (by at most gcraRuleSlack). Such a key is a bucket only through
	// a rule or --layout.
	maybeGCRA
	// sureGCRA: the right form and magnitude, the library's key prefix, and a TTL that
	// matches the TAT the way the library sets it. Detected without a rule.
	sureGCRA
)

func (f gcraFit) String() string {
	switch f {
	case sureGCRA:
		return "sure"
	case maybeGCRA:
		return "maybe"
	}
	return "no"
}

// gcraTTLSlack absorbs PTTL's millisecond rounding and the time between the TIME and PTTL
// replies of one pipeline.
const gcraTTLSlack = 100 * time.Millisecond

// gcraRuleSlack is how much longer than the library's own TTL a bucket's TTL may be under a
// rule: throttled computes the TTL from the TIME it read before its compare-and-swap, so a
// slow client leaves a key that outlives its TAT by up to 1 s plus that delay. Far more is
// a value with a TTL of its own (a timestamp of a session that expires in an hour).
const gcraRuleSlack = time.Second

// gcraTTLBounds says which TATs a key with a TTL can hold as a bucket of this gcra layout:
// TAT − now must lie in (PTTL − below, PTTL + above]. The libraries tie the TTL to the TAT
// when they write it (gcraLib.ttlRule: TAT − now in (TTL − under, TTL + over]), and both
// then count down together. below adds gcraRuleSlack to under (a rule accepts what
// detection calls maybeGCRA); both add gcraTTLSlack. scripts/reset.lua applies the same
// bounds, passed from here.
func (l Layout) gcraTTLBounds() (below, above time.Duration) {
	under, over := l.lib().ttlRule()
	return under + gcraTTLSlack + gcraRuleSlack, gcraTTLSlack + over
}

// TTLShortfall is how much shorter than the time to full the owning application may set a
// bucket's TTL by design: throttled rounds it down to whole seconds (up to 1 s), redis-cell
// to milliseconds; the others set it at least as long.
func (l Layout) TTLShortfall() time.Duration {
	if lib := l.lib(); lib != nil {
		_, over := lib.ttlRule()
		return over
	}
	return 0
}

// gcraShape checks whether the string value at key, with its PTTL (-1: none), can be a
// bucket of this gcra layout at now (the server's time), and says why not. The libraries
// always set a TTL tied to the TAT (gcraTTLBounds), so a value without a TTL, or with one
// the library could not have set for it, is notGCRA whatever a rule says: a counter, a
// flag or a timestamp of another application is often a number of the library's form.
func (l Layout) gcraShape(key, value string, pttl time.Duration, now time.Time) (gcraFit, string) {
	if l.lib() == nil {
		return notGCRA, fmt.Sprintf("layout %s does not store GCRA buckets", l.Name)
	}
	t, err := l.parseTAT(value)
	if err != nil {
		return notGCRA, err.Error()
	}
	if pttl < 0 {
		return notGCRA, fmt.Sprintf("a %s bucket always has a TTL; this string has none (a counter?)", l.Name)
	}
	ahead := time.Duration(t.Unix - nowNanos(now))
	below, above := l.gcraTTLBounds()
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
	if under, _ := l.lib().ttlRule(); ahead <= pttl-under-gcraTTLSlack {
		return maybeGCRA, fmt.Sprintf("%s, and the key's TTL of %s outlasts it by more than %s leaves",
			tatFromNow(t, ahead), pttl, l.Library)
	}
	return sureGCRA, ""
}

// tatFromNow says where a TAT lies: "the TAT is 4.2s from now", or its date when it is far
// off (the number is not a TAT at all, most likely).
func tatFromNow(t TAT, ahead time.Duration) string {
	if ahead > -24*time.Hour && ahead < 24*time.Hour {
		return fmt.Sprintf("the TAT is %s from now", ahead.Round(time.Millisecond))
	}
	return "the TAT is " + t.Time().UTC().Format(time.RFC3339)
}

// detectGCRA finds the gcra preset a string value fits best: a sure fit before a maybe,
// under the preset's own key prefix before without, then the wider TTL rule (the one that
// covers the other's), then registry order. Libraries share forms (redis-rate and
// redis-gcra; throttled and redis-cell), so this is a guess among them; fit is notGCRA
// when none fits, and maybeGCRA means the value needs a rule to be read as a bucket.
func detectGCRA(key, value string, pttl time.Duration, now time.Time) (Layout, gcraFit, string) {
	reasons := make([]string, 0, registry.n)
	var best Layout
	bestRank, bestSpan, bestWhy := 0, time.Duration(0), ""
	for _, l := range presets() {
		if l.Type != GCRA {
			continue
		}
		fit, why := l.gcraShape(key, value, pttl, now)
		if fit == notGCRA {
			reasons = append(reasons, l.Name+": "+why)
			continue
		}
		rank := 2 * int(fit)
		if l.KeyPrefix != "" && strings.HasPrefix(key, l.KeyPrefix) {
			rank++
		}
		under, over := l.lib().ttlRule()
		if rank > bestRank || rank == bestRank && under+over > bestSpan {
			best, bestRank, bestSpan, bestWhy = l, rank, under+over, why
		}
	}
	if bestRank == 0 {
		return Layout{}, notGCRA, strings.Join(reasons, "; ")
	}
	return best, gcraFit(bestRank / 2), bestWhy
}

// gcraReading is one gcra bucket as read: what bucket.State needs.
type gcraReading struct {
	// Exists is false for a missing key: a full bucket in every library.
	Exists bool
	// TAT is the stored theoretical arrival time (zero when missing).
	TAT TAT
	// Fit and Reason: how the value fits the layout (sureGCRA for a missing key).
	Fit    gcraFit
	Reason string
	// Tokens is the level at now, clamped to [0, capacity] (only with a spec).
	Tokens float64
	// Ahead is how far the TAT lies beyond a full window (only with a spec): the stored
	// time is ahead of what the server's clock allows, and Tokens was clamped at 0.
	Ahead time.Duration
	// TTL is the key's PTTL: -1 none, -2 missing.
	TTL time.Duration
}

// gcraState reads one gcra bucket from its raw GET reply (exists false when GET returned
// nil) and PTTL at now, the server's time. A value that is not a bucket of the layout
// comes back with Fit notGCRA and the Reason; the error is for a layout or spec that is
// not valid.
func gcraState(l Layout, spec Spec, key, value string, exists bool, pttl time.Duration, now time.Time) (gcraReading, error) {
	if l.lib() == nil {
		return gcraReading{}, notGCRALayout(l)
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
	r.Fit, r.Reason = l.gcraShape(key, value, pttl, now)
	if r.Fit == notGCRA {
		return r, nil
	}
	r.TAT, _ = l.parseTAT(value)
	if !spec.IsZero() {
		r.Tokens, r.Ahead = l.gcraTokens(spec, r.TAT, now)
	}
	return r, nil
}
