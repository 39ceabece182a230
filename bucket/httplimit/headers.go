package httplimit

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

func policyItem(name string, spec bucket.Spec) string {
	return fmt.Sprintf("%q;q=%d;w=%d", name, int64(spec.Capacity), max(1, ceilSeconds(spec.Wait(0, spec.Capacity))))
}

// setHeaders sets the rate-limit fields described in the package documentation.
func setHeaders(h http.Header, policy string, m bucket.MultiResult, now time.Time) {
	h.Set("RateLimit-Policy", policy)
	tiers := m.Tiers
	if len(tiers) == 0 {
		return
	}
	items := make([]string, len(tiers))
	for i, t := range tiers {
		items[i] = fmt.Sprintf("%q;r=%d;t=%d", t.Name, int64(t.Remaining), ceilSeconds(t.ResetAfter))
	}
	h.Set("RateLimit", strings.Join(items, ", "))
	b := closest(m)
	h.Set("X-RateLimit-Limit", strconv.FormatFloat(b.Spec.Capacity, 'f', -1, 64))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(int64(b.Remaining), 10))
	full := now.Add(b.ResetAfter)
	h.Set("X-RateLimit-Reset", strconv.FormatInt(full.Add(time.Second-1).Unix(), 10))
}

// Headers returns the fields the middleware sends for a decision r of the one-bucket
// policy name taken at now: RateLimit-Policy, RateLimit, the X-RateLimit-* fields, and
// Retry-After (seconds, rounded up) when r was denied and can ever succeed.
func Headers(name string, r bucket.Result, now time.Time) http.Header {
	h := http.Header{}
	m := bucket.MultiResult{Allowed: r.Allowed, Denied: -1, Tiers: []bucket.TierResult{{Name: name, Result: r}}}
	if !r.Allowed {
		m.Denied = 0
	}
	setHeaders(h, policyItem(name, r.Spec), m, now)
	if !r.Allowed && r.RetryAfter >= 0 {
		h.Set("Retry-After", strconv.FormatInt(max(1, ceilSeconds(r.RetryAfter)), 10))
	}
	return h
}

// closest is the tier the legacy headers describe (see the package documentation); the
// longer reset breaks a tie.
func closest(m bucket.MultiResult) bucket.TierResult {
	b := m.Tiers[0]
	for _, t := range m.Tiers[1:] {
		if !m.Allowed {
			if t.RetryAfter < 0 || (b.RetryAfter >= 0 && t.RetryAfter > b.RetryAfter) {
				b = t
			}
			continue
		}
		tr, br := math.Floor(t.Remaining), math.Floor(b.Remaining)
		if tr < br || (tr == br && t.ResetAfter > b.ResetAfter) {
			b = t
		}
	}
	return b
}

func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
