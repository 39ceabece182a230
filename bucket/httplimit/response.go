package httplimit

import (
	"encoding/json"
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

// setHeaders sets the rate-limit fields: per tier q (capacity), w (seconds to refill from
// empty), r (whole tokens left) and t (seconds until full), and X-RateLimit-* of the closest.
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

// Headers returns the fields the middleware sends for a decision r of the one-bucket policy
// name taken at now, with Retry-After when r was denied and can ever succeed.
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

// closest is the tier nearest to denying: on a deny the longest wait, else the fewest whole
// tokens left; the longer reset breaks a tie.
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

type problem struct {
	Type       string   `json:"type"`
	Title      string   `json:"title"`
	Status     int      `json:"status"`
	Detail     string   `json:"detail,omitempty"`
	Violated   []string `json:"violated-policies,omitempty"`
	RetryAfter *int64   `json:"retry-after,omitempty"`
}

const quotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"

func (l *Limiter) refuse(w http.ResponseWriter, d Decision) {
	p := problem{Type: "about:blank", Title: http.StatusText(d.Status), Status: d.Status}
	switch {
	case d.Source == SourceRedis || d.Source == SourceLocal:
		p.Type, p.Detail = quotaExceeded, "rate limit exceeded"
		for _, t := range d.Result.Tiers {
			if !t.Allowed {
				p.Violated = append(p.Violated, t.Name)
			}
		}
		if wait := d.Result.RetryAfter(); wait >= 0 {
			s := ceilSeconds(wait)
			p.RetryAfter = &s
		} else {
			p.Detail = "the request costs more than a tier's capacity and can never be allowed"
		}
	case d.Source == SourceFailClosed:
		s := max(1, ceilSeconds(l.breaker.retryIn()))
		p.RetryAfter, p.Detail = &s, "rate limiter unavailable"
	case d.Status == http.StatusTooManyRequests:
		p.Type, p.Detail = quotaExceeded, "the request costs more than a tier's capacity and can never be allowed"
		for _, t := range d.Tiers {
			if t.Cost > t.Spec.Capacity {
				p.Violated = append(p.Violated, t.Name)
			}
		}
	default:
		p.Detail = "rate limiter misconfigured"
	}
	if p.RetryAfter != nil {
		w.Header().Set("Retry-After", strconv.FormatInt(*p.RetryAfter, 10))
	}
	body, _ := json.Marshal(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(d.Status)
	_, _ = w.Write(append(body, '\n'))
}
