package bucket

import (
	"fmt"
	"strings"
	"time"
)

// gcraFit says how well a stored string fits a gcra layout.
type gcraFit int

const (
	notGCRA   gcraFit = iota // never a bucket of the layout, whatever a rule says
	maybeGCRA                // a bucket only through a rule or --layout
	sureGCRA                 // detected without a rule
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

// gcraTTLSlack absorbs PTTL's ms rounding and the time between TIME and PTTL replies;
// gcraRuleSlack is how much longer a TTL may be under a rule (throttled's slow CAS).
const (
	gcraTTLSlack  = 100 * time.Millisecond
	gcraRuleSlack = time.Second
)

// gcraTTLBounds: a bucket's TAT − now lies in (PTTL − below, PTTL + above], as a rule and
// scripts/reset.lua accept it.
func (l Layout) gcraTTLBounds() (below, above time.Duration) {
	under, over := l.lib().ttlRule()
	return under + gcraTTLSlack + gcraRuleSlack, gcraTTLSlack + over
}

// TTLShortfall is how much shorter than the time to full the application may set a TTL.
func (l Layout) TTLShortfall() time.Duration {
	if lib := l.lib(); lib != nil {
		_, over := lib.ttlRule()
		return over
	}
	return 0
}

// gcraShape says how well value at key, with its PTTL (-1: none), fits the layout at now,
// and why not. The libraries always set a TTL tied to the TAT.
func (l Layout) gcraShape(key, value string, pttl time.Duration, now time.Time) (gcraFit, string) {
	if l.lib() == nil {
		return notGCRA, fmt.Sprintf("layout %s does not store GCRA buckets", l.Name)
	}
	t, err := l.parseTAT(value)
	if err != nil {
		return notGCRA, err.Error()
	}
	if pttl < 0 {
		return notGCRA, fmt.Sprintf("%s bucket always has a TTL; this string has none (a counter?)", an(l.Name))
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

// tatFromNow says where a TAT lies: "the TAT is 4.2s from now", or its date when far off.
func tatFromNow(t TAT, ahead time.Duration) string {
	if ahead > -24*time.Hour && ahead < 24*time.Hour {
		return fmt.Sprintf("the TAT is %s from now", ahead.Round(time.Millisecond))
	}
	return "the TAT is " + t.Time().UTC().Format(time.RFC3339)
}

// detectGCRA finds the gcra preset value fits best: sure before maybe, own key prefix
// first, then the wider TTL rule, then registry order. Libraries share forms: a guess.
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

// gcraState reads one gcra bucket from its GET reply and PTTL at now. A value that is not
// a bucket comes back with Fit notGCRA; the error is for an invalid layout or spec.
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
