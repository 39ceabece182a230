package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

const maxSamples = 4096 // the chart's history, whatever the window and interval

// bucketView is the body of the watch screen and top's detail pane, fed one state at a time.
type bucketView struct {
	st          Styles
	cost        float64
	window      time.Duration
	cur         bucket.State
	act         bucket.Activity
	has, hasAct bool
	hist        []sample
	spec        bucket.Spec // the last known, for the chart's scale while the key is missing
	seen        int64       // server time (µs) of the last read that found the key
}

func newBucketView(st Styles, cost float64, window time.Duration) bucketView {
	if cost <= 0 {
		cost = 1
	}
	return bucketView{st: st, cost: cost, window: window}
}

// observe takes a new read of the bucket. A read of another key starts afresh.
func (v *bucketView) observe(s bucket.State) {
	if v.has && v.cur.Key != s.Key {
		*v = newBucketView(v.st, v.cost, v.window)
	}
	if v.has {
		if a, ok := s.ActivitySince(v.cur); ok {
			v.act, v.hasAct = a, true
		} else if s.Now <= v.cur.Now {
			return // the same read again (or an older one): nothing new
		}
	}
	v.cur, v.has = s, true
	if s.Exists {
		v.seen = s.Now
	}
	if s.HasSpec() {
		v.spec = s.Spec
	}
	// A missing bucket of known capacity reads as full; without the spec there is no level.
	if s.Problem == "" && (s.Exists || s.HasSpec()) {
		if n := len(v.hist); n == 0 || v.hist[n-1].at < s.Now {
			v.hist = append(v.hist, sample{at: s.Now, tokens: s.Tokens})
		}
	}
	oldest := s.Now - v.window.Microseconds()
	drop := 0
	for drop < len(v.hist)-1 && v.hist[drop].at < oldest {
		drop++
	}
	if drop = max(drop, len(v.hist)-maxSamples); drop > 0 {
		v.hist = append(v.hist[:0], v.hist[drop:]...)
	}
}

// view renders the bucket in a w×h box; stale dims it.
func (v bucketView) view(w, h int, stale bool) string {
	if !v.has {
		return v.st.Subtle.Render("waiting for the first read…")
	}
	s := v.cur
	if s.Problem != "" {
		return v.st.Bad.Render(trunc("✖ "+format.SafeKey(s.Key)+" "+s.Problem, w)) + "\n" +
			v.st.Subtle.Render(trunc("type "+s.Type+" · TTL "+format.TTL(s.TTL), w))
	}
	lines := append([]string{v.gauge(w)}, wrapJoin(v.stats(w), "   ", "", w)...)
	if !s.HasSpec() && s.Exists {
		lines = append(lines, wrapText(v.st.Notice, "capacity and rate unknown: add a rule for this key or pass --capacity and --rate", w)...)
	}
	out := strings.Join(lines, "\n")
	if rest := h - len(lines) - 1; rest >= 4 && (s.Exists || len(v.hist) > 0) {
		top := v.spec.Capacity
		if v.spec.IsZero() {
			for _, p := range v.hist {
				top = max(top, p.tokens*1.1)
			}
		}
		chart := levelChart(v.st, v.hist, s.Now, w, rest, top)
		if chart == "" {
			chart = v.st.Subtle.Render("token level chart: collecting (needs " + format.Duration(minChartSpan) + " of history)…")
		}
		out += "\n\n" + chart
	}
	if stale {
		out = v.st.Stale.Render(ansi.Strip(out))
	}
	return out
}

func (v bucketView) gauge(w int) string {
	s := v.cur
	label := v.st.Label.Render("tokens ")
	if !s.Exists { // not 0 tokens: a typo must not look like a drained bucket
		text := v.st.Notice.Bold(true).Render("missing: no such key")
		if s.HasSpec() {
			return text + v.st.Subtle.Render(" · reads as full: "+format.Tokens(s.Tokens)+" / "+format.Tokens(s.Spec.Capacity)+" tokens")
		}
		return text + v.st.Subtle.Render(" · check the key; a bucket appears with its first request")
	}
	if !s.LevelKnown() {
		return label + v.st.Value.Render("? (a TAT: needs capacity and rate)")
	}
	if !s.HasSpec() {
		return label + v.st.Value.Render(format.Tokens(s.Tokens))
	}
	nums := " " + format.Tokens(s.Tokens) + " / " + format.Tokens(s.Spec.Capacity) + "  " + format.Percent(s.Fill())
	bar := w - lipgloss.Width(label) - lipgloss.Width(nums)
	return label + v.st.Bar(bar, s.Fill()) + v.st.FillStyle(s.Fill()).Bold(true).Render(nums)
}

// stats are the "label value" items under the gauge, in reading order, each cut to w.
func (v bucketView) stats(w int) []string {
	s := v.cur
	item := func(label, value string) string {
		return trunc(v.st.Label.Render(label+" ")+v.st.Value.Render(value), w)
	}
	pending := "…"
	var items []string
	if s.Layout.Native && s.Exists {
		allowed, denied := pending, pending
		if v.hasAct {
			allowed = format.Rate(v.act.Allowed)
			denied = format.Rate(v.act.Denied)
			if v.act.Allowed+v.act.Denied > 0 {
				denied += " (" + format.Percent(v.act.DenyRatio()) + ")"
			}
		}
		items = append(items, item("allowed", allowed), item("denied", denied))
	}
	if s.HasSpec() && s.Exists {
		consumed := pending
		if v.hasAct && v.act.ConsumedKnown {
			consumed = format.Rate(v.act.Consumed)
		}
		items = append(items, item("consumed", consumed))
	}
	if s.HasSpec() {
		items = append(items, item("refill", format.Rate(s.Spec.Rate)))
		retry := format.NeverAllowed
		if r, err := s.Peek(v.cost); err == nil {
			retry = format.RetryAfter(r.RetryAfter)
		}
		items = append(items, item("retry-after", retry), item("full in", format.Wait(s.TimeToFull())))
	}
	updated := format.Ago(s.Age())
	switch {
	case !s.Exists && v.seen > 0:
		updated = "gone for " + format.Duration(time.Duration(s.Now-v.seen)*time.Microsecond) + " (deleted or expired)"
	case !s.Exists:
		updated = "never (no such key)"
	case s.Ahead > 0 && s.TAT != nil:
		updated = v.st.Warn.Render(format.Debt(s.Ahead))
	case s.Ahead > 0:
		updated = v.st.Warn.Render(format.Ahead(s.Ahead))
	}
	items = append(items, item("TTL", format.TTL(s.TTL)), item("updated", updated))
	layout := s.Layout.Name
	switch {
	case s.Guess != "":
		layout += " (a guess from a bare number: " + format.DeclareHint(s.Layout.Name) + " to act on it)"
	case s.Detected:
		layout += " (detected)"
	}
	if layout != "" {
		items = append(items, item("layout", layout))
	}
	if s.SpecSource != "" {
		items = append(items, item("spec from", s.SpecSource))
	}
	return items
}
