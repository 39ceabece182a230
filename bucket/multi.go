package bucket

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/slot"
	"github.com/bucketctl/bucketctl/scripts"
)

// Tier is one bucket of a multi-tier decision: a user's bucket, an API key's, an endpoint's,
// an overall one. Each tier has its own spec and cost.
//
// In a Redis Cluster the keys of one decision must hash to the same slot, so give them one
// hash tag: the part of the key between the first "{" and the next "}" is all that is hashed.
// rl:{user42}:user, rl:{user42}:endpoint:/search and rl:{user42}:global share a slot; rl:user42
// and rl:global do not. A bucket shared by every user (a service-wide limit) lives in one slot
// and cannot be decided atomically with per-user buckets in other slots: decide it with its
// own Take, or give each user's tiers an overall bucket under the user's tag as above.
type Tier struct {
	// Name labels the tier in results and headers ("user", "endpoint", "global").
	Name string
	// Key is the bucket's Redis key.
	Key string
	// Spec is the tier's shape; a zero Spec takes the capacity and rate stored in the bucket.
	Spec Spec
	// Cost is the tokens this request takes from the tier (>= 0).
	Cost float64
}

// TierResult is one tier's part of a multi-tier decision.
type TierResult struct {
	Name string
	Key  string
	// Result is the tier's view: Allowed says whether the tier held its cost; Remaining is the
	// level after the decision (cost taken when the decision was allowed, the refilled level
	// when it was denied); RetryAfter is the wait until the tier holds its cost again.
	Result
}

// MultiResult is an all-or-nothing decision over several tiers.
type MultiResult struct {
	// Allowed is true when every tier held its cost and the cost was taken from each.
	Allowed bool
	// Denied is the index in Tiers of the first tier that lacked its cost; -1 when allowed.
	Denied int
	// Tiers holds one result per tier, in the order given.
	Tiers []TierResult
}

// RetryAfter is the wait until every tier holds its cost again, the longest of the tiers'
// waits: when the request may be retried with a chance of success. It is 0 when all tiers
// hold their cost now, and -1 when some tier's cost exceeds its capacity (never).
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

// DeniedBy returns the tier that denied the decision (the first that lacked its cost), and
// false when the decision was allowed.
func (m MultiResult) DeniedBy() (TierResult, bool) {
	if m.Denied < 0 || m.Denied >= len(m.Tiers) {
		return TierResult{}, false
	}
	return m.Tiers[m.Denied], true
}

var multiScript = scripts.Lazy(scripts.MultiBucket)

// TakeAll decides several tiers all or nothing in one atomic script call: every bucket is
// refilled, and only when every tier holds its cost is the cost taken from each; otherwise
// nothing is taken from any tier (unlike a pipeline of Take calls, which drains the tiers
// that allow while another denies). A denied decision still writes each bucket back at its
// refilled level and counts `denied` on the tiers that lacked their cost; fields, counters
// and TTLs follow Take's rules (see scripts/multi_bucket.lua).
//
// Keys must be distinct. On a *redis.ClusterClient they must share one slot and on a
// *redis.Ring one hash tag (see Tier); TakeAll checks this before calling Redis and returns
// ErrCrossSlot. A tier with a zero Spec uses the spec stored in its bucket.
func (s *Store) TakeAll(ctx context.Context, tiers []Tier) (MultiResult, error) {
	if len(tiers) == 0 {
		return MultiResult{}, fmt.Errorf("%w: no tiers", ErrInvalid)
	}
	keys := make([]string, len(tiers))
	args := make([]interface{}, 2, 2+3*len(tiers))
	args[0], args[1] = "", s.grace
	if s.now != nil {
		args[0] = strconv.FormatInt(s.now().UnixMicro(), 10)
	}
	for i, t := range tiers {
		if err := s.check(t.Key, t.Spec, t.Cost); err != nil {
			return MultiResult{}, fmt.Errorf("tier %s: %w", tierLabel(t, i), err)
		}
		if j := slices.Index(keys[:i], t.Key); j >= 0 { // a few tiers: no map
			return MultiResult{}, fmt.Errorf("%w: tiers %s and %s share key %q", ErrInvalid, tierLabel(tiers[j], j), tierLabel(t, i), t.Key)
		}
		keys[i] = t.Key
		var capS, rateS string
		if !t.Spec.IsZero() {
			capS, rateS = fmtFloat(t.Spec.Capacity), fmtFloat(t.Spec.Rate)
		}
		args = append(args, capS, rateS, fmtFloat(t.Cost))
	}
	if err := s.checkSlots(keys); err != nil {
		return MultiResult{}, err
	}
	// Sent at most once, as Take is: never re-sent after a network error or timeout.
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

// checkSlots refuses keys that the client would route to different nodes: a Cluster by
// slot, a Ring by hash tag.
func (s *Store) checkSlots(keys []string) error {
	var same func(a, b string) bool
	var name func(string) string // only for the error
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

var tierInMsg = lazyRegexp(`\(tier (\d+)\)$`)

// multiErr maps a script error to the package's errors, naming the tier it is about.
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

// TakeAllModel is the reference model of TakeAll, as Spec.Take is of Take: given each tier's
// stored level (exists[i] false for a missing bucket, which starts full) and the time now in
// microseconds, it returns the levels after the decision, whether the buckets are written,
// and the result. Every tier needs a non-zero Spec.
//
// written is false only when some tier's cost exceeds its capacity: such a decision is
// denied and no bucket is touched. Otherwise every bucket is written (levels holds what the
// script stores), on deny too.
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
		tr.Remaining = out[i].Tokens
		tr.RetryAfter = t.Spec.Wait(out[i].Tokens, t.Cost)
		if t.Cost > t.Spec.Capacity {
			tr.RetryAfter = -1
		}
		tr.ResetAfter = t.Spec.Wait(out[i].Tokens, t.Spec.Capacity)
	}
	if impossible {
		return append(out[:0:0], levels...), false, r
	}
	return out, true, r
}

// lazyRegexp compiles expr on first use, not at start-up: every package's init runs on
// every bucketctl command.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
