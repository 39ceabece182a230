package bucket

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/slot"
	"github.com/bucketctl/bucketctl/scripts"
)

// Tier is one bucket of a multi-tier decision, with its own spec (zero: the stored one).
type Tier struct {
	Name string // labels the tier in results and headers ("user", "global")
	Key  string
	Spec Spec
	Cost float64
}

// TierResult is one tier's part of a multi-tier decision.
type TierResult struct {
	Name string
	Key  string
	Result
}

// MultiResult is an all-or-nothing decision; Denied is the first tier short (-1: allowed).
type MultiResult struct {
	Allowed bool
	Denied  int
	Tiers   []TierResult
}

// RetryAfter is the longest of the tiers' waits (-1: some tier never holds its cost).
func (m MultiResult) RetryAfter() time.Duration {
	var d time.Duration
	for _, t := range m.Tiers {
		if t.RetryAfter < 0 {
			return -1
		}
		d = max(d, t.RetryAfter)
	}
	return d
}

// DeniedBy returns the tier that denied the decision; false when it was allowed.
func (m MultiResult) DeniedBy() (TierResult, bool) {
	if m.Denied < 0 || m.Denied >= len(m.Tiers) {
		return TierResult{}, false
	}
	return m.Tiers[m.Denied], true
}

var multiScript = scripts.Lazy(scripts.MultiBucket)

// TakeAll decides several tiers all or nothing in one atomic script call. Keys must be
// distinct and, on a Cluster or Ring, share one hash tag (else ErrCrossSlot).
func (s *Store) TakeAll(ctx context.Context, tiers []Tier) (MultiResult, error) {
	if len(tiers) == 0 {
		return MultiResult{}, fmt.Errorf("%w: no tiers", ErrInvalid)
	}
	keys := make([]string, len(tiers))
	args := make([]interface{}, 2, 2+3*len(tiers))
	args[0], args[1] = s.clientNow(), s.grace
	for i, t := range tiers {
		if err := s.check(t.Key, t.Spec, t.Cost); err != nil {
			return MultiResult{}, fmt.Errorf("tier %s: %w", tierLabel(t, i), err)
		}
		if j := slices.Index(keys[:i], t.Key); j >= 0 { // a few tiers: no map
			return MultiResult{}, fmt.Errorf("%w: tiers %s and %s share key %q", ErrInvalid, tierLabel(tiers[j], j), tierLabel(t, i), t.Key)
		}
		keys[i] = t.Key
		capS, rateS := t.Spec.args()
		args = append(args, capS, rateS, fmtFloat(t.Cost))
	}
	if err := s.checkSlots(keys); err != nil {
		return MultiResult{}, err
	}
	v, err := s.run(ctx, multiScript(), "", keys, args)
	if err != nil {
		return MultiResult{}, s.decisionErr(strings.Join(keys, ","), err, func(err error) error { return multiErr(tiers, keys, err) })
	}
	a, _ := v.([]interface{})
	return parseMulti(a, tiers)
}

func tierLabel(t Tier, i int) string {
	if t.Name != "" {
		return strconv.Quote(t.Name)
	}
	return strconv.Itoa(i + 1)
}

func (s *Store) checkSlots(keys []string) error {
	var same func(a, b string) bool
	var name func(string) string
	switch s.rdb.(type) {
	case *redis.ClusterClient:
		same = func(a, b string) bool { return slot.Of(a) == slot.Of(b) }
		name = func(k string) string { return "slot " + strconv.Itoa(slot.Of(k)) }
	case *redis.Ring:
		same = func(a, b string) bool { return slot.HashTag(a) == slot.HashTag(b) }
		name = func(k string) string { return "shard key " + strconv.Quote(slot.HashTag(k)) }
	default:
		return nil
	}
	for _, k := range keys[1:] {
		if !same(keys[0], k) {
			return fmt.Errorf("%w: %q has %s, %q %s: give the keys of one decision one hash tag, e.g. rl:{user42}:user and rl:{user42}:global",
				ErrCrossSlot, keys[0], name(keys[0]), k, name(k))
		}
	}
	return nil
}

var lazyRegexp = rediserr.LazyRegexp

var tierInMsg = lazyRegexp(`\(tier (\d+)\)$`)

func multiErr(tiers []Tier, keys []string, err error) error {
	m := tierInMsg().FindStringSubmatch(strings.TrimSpace(err.Error()))
	if m == nil {
		return scriptErr(strings.Join(keys, ","), err)
	}
	i, _ := strconv.Atoi(m[1])
	if i < 1 || i > len(tiers) {
		return err
	}
	return fmt.Errorf("tier %s: %w", tierLabel(tiers[i-1], i-1), scriptErr(tiers[i-1].Key, err))
}

func parseMulti(v []interface{}, tiers []Tier) (MultiResult, error) {
	const per = 6
	if len(v) != 1+per*len(tiers) {
		return MultiResult{}, fmt.Errorf("unexpected multi-tier script reply of %d values for %d tiers", len(v), len(tiers))
	}
	denied, _ := v[0].(int64)
	m := MultiResult{Allowed: denied == 0, Denied: int(denied) - 1, Tiers: make([]TierResult, len(tiers))}
	for i, t := range tiers {
		r, err := parseResult(v[1+per*i:1+per*(i+1)], t.Spec)
		if err != nil {
			return MultiResult{}, fmt.Errorf("tier %s: %w", tierLabel(t, i), err)
		}
		m.Tiers[i] = TierResult{Name: t.Name, Key: t.Key, Result: r}
	}
	return m, nil
}

// TakeAllModel is the reference model of TakeAll (written false: a cost above capacity).
func TakeAllModel(tiers []Tier, levels []Level, exists []bool, now int64) (out []Level, written bool, r MultiResult) {
	out = make([]Level, len(tiers))
	r = MultiResult{Allowed: true, Denied: -1, Tiers: make([]TierResult, len(tiers))}
	impossible := false
	for i, t := range tiers {
		l := levels[i]
		if !exists[i] {
			l = Level{Tokens: t.Spec.Capacity, TS: now}
		}
		out[i] = t.Spec.At(l, now)
		ok := t.Cost <= t.Spec.Capacity && out[i].Tokens >= t.Cost
		impossible = impossible || t.Cost > t.Spec.Capacity
		if !ok && r.Allowed {
			r.Allowed, r.Denied = false, i
		}
		r.Tiers[i] = TierResult{Name: t.Name, Key: t.Key, Result: Result{Allowed: ok, Spec: t.Spec}}
	}
	for i, t := range tiers {
		if r.Allowed {
			out[i].Tokens -= t.Cost
		}
		tr := &r.Tiers[i].Result
		tr.Remaining, tr.RetryAfter, tr.ResetAfter = out[i].Tokens, t.Spec.Wait(out[i].Tokens, t.Cost), t.Spec.Wait(out[i].Tokens, t.Spec.Capacity)
		if t.Cost > t.Spec.Capacity {
			tr.RetryAfter = -1
		}
	}
	if impossible {
		return append(out[:0:0], levels...), false, r
	}
	return out, true, r
}
