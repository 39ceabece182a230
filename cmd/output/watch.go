package output

import (
	"fmt"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// WatchView is one line of watch's JSON stream: the bucket as inspect shows it, plus the
// read's server time and the activity since the previous read (null on the first line).
type WatchView struct {
	Time string `json:"time"`
	StateView
	IntervalMS   *float64 `json:"interval_ms"`
	AllowedPerS  *float64 `json:"allowed_per_s"`
	DeniedPerS   *float64 `json:"denied_per_s"`
	ConsumedPerS *float64 `json:"consumed_per_s"`
	RetryAfterMS *float64 `json:"retry_after_ms"`
}

func WatchOf(s bucket.State, act *bucket.Activity, cost float64) WatchView {
	v := WatchView{Time: time.UnixMicro(s.Now).UTC().Format(time.RFC3339Nano), StateView: StateOf(s)}
	f := func(x float64) *float64 { return &x }
	if act != nil {
		v.IntervalMS = f(format.JSONMS(act.Interval))
		if act.Counted {
			v.AllowedPerS, v.DeniedPerS = f(format.JSONRate(act.Allowed)), f(format.JSONRate(act.Denied))
		}
		if act.ConsumedKnown {
			v.ConsumedPerS = f(format.JSONRate(act.Consumed))
		}
	}
	if r, err := s.Peek(cost); err == nil {
		v.RetryAfterMS = f(format.JSONRetryAfter(r.RetryAfter))
	}
	return v
}

// WatchLine is one logfmt-style line: time, key, then what is known of the bucket.
func WatchLine(s bucket.State, act *bucket.Activity, cost float64) string {
	var b strings.Builder
	kv := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if strings.ContainsAny(v, " \"=") || v == "" {
			v = fmt.Sprintf("%q", v)
		}
		b.WriteString(k + "=" + v)
	}
	kv("time", time.UnixMicro(s.Now).UTC().Format("2006-01-02T15:04:05.000Z"))
	kv("key", format.SafeKey(s.Key))
	if s.Problem != "" {
		kv("problem", s.Problem)
		return b.String()
	}
	if !s.Exists {
		// Never tokens=0: a typo must not read as a drained bucket.
		kv("exists", "false")
		if !s.HasSpec() {
			kv("missing", "no such key")
			kv("ttl", format.TTL(s.TTL))
			return b.String()
		}
	}
	kv("tokens", format.Tokens(s.Tokens))
	if s.HasSpec() {
		kv("capacity", format.Tokens(s.Spec.Capacity))
		kv("fill", format.Percent(s.Fill()))
		kv("rate", format.PerSecond(s.Spec.Rate))
	} else {
		kv("spec", "unknown")
	}
	var a bucket.Activity
	if act != nil {
		a = *act
	}
	rate := func(k string, known bool, v float64) {
		if act == nil || !known {
			kv(k, "-")
			return
		}
		kv(k, format.PerSecond(v))
	}
	if s.Layout.Native {
		rate("allowed_per_s", a.Counted, a.Allowed)
		rate("denied_per_s", a.Counted, a.Denied)
	}
	if s.HasSpec() {
		rate("consumed_per_s", a.ConsumedKnown, a.Consumed)
		if r, err := s.Peek(cost); err == nil {
			// A line scripts read: one word for never, as it has always been.
			retry := "never"
			if r.RetryAfter >= 0 {
				retry = format.Wait(r.RetryAfter)
			}
			kv("retry_after", retry)
		}
	}
	kv("ttl", format.TTL(s.TTL))
	if s.Exists {
		kv("updated", format.Ago(s.Age()))
	} else {
		kv("updated", "never")
	}
	kv("layout", s.Layout.Name)
	return b.String()
}
