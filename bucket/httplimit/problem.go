package httplimit

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// problem is the application/problem+json body of a refusal.
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
