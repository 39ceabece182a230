package httplimit

import (
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

func TestLocalBucketsBounded(t *testing.T) {
	lb := newLocalBuckets(2)
	spec := bucket.Spec{Capacity: 2, Rate: 1}
	take := func(key string, now int64) bucket.MultiResult {
		return lb.takeAll([]bucket.Tier{{Name: "user", Key: key, Spec: spec, Cost: 1}}, now)
	}
	for range 2 {
		take("a", 0)
	}
	if r := take("a", 0); r.Allowed {
		t.Fatal("a third take from a bucket of 2 was allowed")
	}
	take("b", 0)
	take("c", 0) // evicts a, the least recently used
	if n := lb.order.Len(); n != 2 {
		t.Fatalf("%d buckets kept, want at most 2", n)
	}
	if r := take("a", 0); !r.Allowed || r.Tiers[0].Remaining != 1 {
		t.Fatalf("evicted bucket a came back as %+v, want full", r.Tiers[0].Result)
	}
	// b was evicted by a's return; c is still there and refills with time.
	if r := take("c", 500_000); !r.Allowed || r.Tiers[0].Remaining != 0.5 {
		t.Fatalf("bucket c: %+v, want 1 + 0.5 refilled - 1", r.Tiers[0].Result)
	}

	// All or nothing, as in Redis: a denying tier leaves the other untouched.
	two := []bucket.Tier{
		{Name: "user", Key: "u", Spec: bucket.Spec{Capacity: 5, Rate: 1}, Cost: 1},
		{Name: "route", Key: "r", Spec: bucket.Spec{Capacity: 1, Rate: 1}, Cost: 1},
	}
	lb = newLocalBuckets(10)
	lb.takeAll(two, 0)
	r := lb.takeAll(two, 0)
	if r.Allowed || r.Denied != 1 || r.Tiers[0].Remaining != 4 {
		t.Fatalf("local multi-tier deny: %+v", r)
	}
}

func TestBreakerStates(t *testing.T) {
	now := time.Unix(0, 0)
	var log []string
	b := &breaker{Breaker: Breaker{Threshold: 2, Cooldown: time.Second}, now: func() time.Time { return now },
		notify: func(from, to BreakerState) { log = append(log, from.String()+">"+to.String()) }}
	call := func() (bool, bool) { return b.acquire() }

	c, p := call()
	b.done(p, failed)
	c2, p2 := call()
	b.done(p2, succeeded) // a success resets the count
	if !c || !c2 || p || p2 || b.current() != Closed {
		t.Fatal("closed breaker refused calls or counted non-consecutive failures")
	}
	for range 2 {
		_, p = call()
		b.done(p, failed)
	}
	if c, _ := call(); c || b.current() != Open || b.retryIn() != time.Second {
		t.Fatalf("after 2 failures: call=%v state %v retryIn %v", c, b.current(), b.retryIn())
	}
	now = now.Add(time.Second)
	c, p = call()
	if !c || !p || b.current() != HalfOpen {
		t.Fatal("no probe after the cool-down")
	}
	if c2, _ := call(); c2 {
		t.Fatal("a second call while the probe is in flight")
	}
	b.done(p, neutral) // no verdict: still half-open, the next request probes
	c, p = call()
	if !c || !p {
		t.Fatal("no new probe after a neutral one")
	}
	b.done(p, succeeded)
	if b.current() != Closed {
		t.Fatalf("after a good probe: %v", b.current())
	}
	if got := strings.Join(log, " "); got != "closed>open open>half-open half-open>closed" {
		t.Fatalf("transitions %q", got)
	}
}

func TestPartitionID(t *testing.T) {
	for id, want := range map[string]string{
		"user:42":                  "user:42",
		"user:a}b":                 "h:",
		"user:{x}":                 "h:",
		strings.Repeat("x", 65):    "h:",
		strings.Repeat("x", 64):    strings.Repeat("x", 64),
		"ip:2001:db8:1:2::/64":     "ip:2001:db8:1:2::/64",
		"key:0123456789abcdef0123": "key:0123456789abcdef0123",
	} {
		got := partitionID(id)
		if !strings.HasPrefix(got, want) || (want == "h:" && len(got) != 2+32) {
			t.Errorf("partitionID(%q) = %q, want %q…", id, got, want)
		}
	}
}

func TestClosestTier(t *testing.T) {
	tr := func(name string, rem float64, retry, reset time.Duration) bucket.TierResult {
		return bucket.TierResult{Name: name, Result: bucket.Result{Remaining: rem, RetryAfter: retry, ResetAfter: reset}}
	}
	allowed := bucket.MultiResult{Allowed: true, Denied: -1, Tiers: []bucket.TierResult{
		tr("a", 9.5, 0, time.Second), tr("b", 3.9, 0, time.Second), tr("c", 3.2, 0, 2*time.Second)}}
	if got := closest(allowed).Name; got != "c" {
		t.Errorf("allowed: closest %q, want c (3 whole tokens, longer reset)", got)
	}
	denied := bucket.MultiResult{Denied: 0, Tiers: []bucket.TierResult{
		tr("a", 0.5, time.Second, 2*time.Second), tr("b", 0.1, 3*time.Second, 4*time.Second), tr("c", 9, 0, 0)}}
	if got := closest(denied).Name; got != "b" {
		t.Errorf("denied: closest %q, want b (longest wait)", got)
	}
	denied.Tiers[2].RetryAfter = -1
	if got := closest(denied).Name; got != "c" {
		t.Errorf("denied: closest %q, want c (never)", got)
	}
}
