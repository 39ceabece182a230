package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/tui/format"
)

// LoadProgressLine is one plain line of a run's progress, for a stderr without a
// terminal: "3s/10s  allowed 39  denied 148,374  errors 0  last second ...  p99 3.18ms".
func LoadProgressLine(s load.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s", format.Duration(s.Elapsed), format.Duration(s.Duration))
	if s.Requests > 0 {
		fmt.Fprintf(&b, "  requests %s/%s", format.GroupDigits(s.Decisions), format.GroupDigits(s.Requests))
	}
	fmt.Fprintf(&b, "  allowed %s  denied %s  errors %s", format.GroupDigits(s.Allowed), format.GroupDigits(s.Denied), format.GroupDigits(s.Errors))
	if n := completeSeconds(s); n > 0 {
		last := s.PerSecond[n-1]
		fmt.Fprintf(&b, "  last second %s allowed, %s denied", format.Rate(float64(last.Allowed)), format.Rate(float64(last.Denied)))
	}
	if s.Retries > 0 {
		fmt.Fprintf(&b, "  retries %s", format.GroupDigits(s.Retries))
	}
	fmt.Fprintf(&b, "  p99 %s", format.Latency(s.Latency.P99))
	if s.HasTokens {
		fmt.Fprintf(&b, "  tokens %s/%s", format.Tokens(s.Tokens), format.Tokens(s.Spec.Capacity))
	}
	return b.String()
}

// RenderLoadReport writes a run's report for a person, w cells wide.
func RenderLoadReport(st Styles, r load.Report, w int) string {
	w = max(w, 40)
	how := string(r.Strategy) + " · " + arrivalText(r) + " · " + format.Plural(r.Concurrency, "worker")
	if r.Pipeline > 1 {
		how += " · pipeline " + strconv.Itoa(r.Pipeline)
	}
	how += " · measured " + format.Seconds(r.DurationS)
	lines := reportHead(st, "bucketctl load", r.Key, how+"\n"+specText(r)+onServer(r.Server), w)
	add := func(s ...string) { lines = append(lines, s...) }
	if r.Interrupted {
		add(st.Warn.Render("interrupted: the report so far"))
	}
	add("")

	kv := st.kv
	fields := func(f ...string) { add(wrapJoin(f, "   ", "  ", w)...) }
	fields(kv("requests", st.Value.Render(format.GroupDigits(r.Requests))),
		kv("throughput", st.Value.Render(format.Rate(r.OpsPerSec))),
		kv("redis calls/request", st.Value.Render(format.Fixed(r.RedisCallsPerRequest, 2))))
	counts := countItems(st, r.Allowed, r.Denied, r.Errors, r.Retries)
	if r.Unsent > 0 {
		counts = append(counts, kv("unsent", st.Warn.Render(format.GroupDigits(r.Unsent))))
	}
	fields(counts...)
	fields(kv("theoretical max", st.Value.Render(format.GroupDigits(r.TheoreticalMax)))+
		st.Subtle.Render(fmt.Sprintf(" (capacity + rate × %s)", format.Seconds(r.DurationS))),
		kv("over-grant", overGrant(st, r.OverGrantPct)))
	for i, e := range r.ErrorSamples {
		if i == 3 {
			add(st.Subtle.Render(fmt.Sprintf("  … %d more kinds of error (see -o json)", len(r.ErrorSamples)-3)))
			break
		}
		add(wrapLine(st.Bad.Render("  ✖ ")+st.Subtle.Render(format.GroupDigits(e.Count)+"× ")+format.SafeKey(oneLine(e.Message)), "    ", w)...)
	}
	if r.Unsent > 0 {
		words := strings.Fields("unsent: due arrivals no worker was free to send; raise --concurrency")
		for i, wd := range words {
			words[i] = st.Subtle.Render(wd)
		}
		words[0] = "  " + words[0]
		add(wrapJoin(words, " ", "    ", w)...) // between words only: never at a flag's hyphens
	}
	add("")
	l := r.LatencyMS
	pct := func(name string, v float64) string { return name + " " + st.Value.Render(format.Latency(v)) }
	add(wrapJoin([]string{kv("latency", pct("p50", l.P50)), pct("p90", l.P90), pct("p99", l.P99),
		pct("p99.9", l.P999), pct("max", l.Max)}, "  ", "  ", w)...)
	add(histogramLines(st, r.Histogram, w)...)
	var out []string
	for _, s := range lines {
		out = append(out, wrapLine(s, "  ", w)...)
	}
	return strings.Join(out, "\n")
}

func specText(r load.Report) string {
	return fmt.Sprintf("capacity %s · rate %s · cost %s", format.Tokens(r.Capacity), format.Rate(r.Rate), format.Tokens(r.Cost))
}

func reportHead(st Styles, title, key, about string, w int) []string {
	lines := wrapLine(st.Title.Render(title)+" "+st.Value.Render(format.SafeKey(key)), "  ", w)
	for _, l := range strings.Split(ansi.Wordwrap(about, w, ""), "\n") {
		lines = append(lines, st.Subtle.Render(l))
	}
	return lines
}

func arrivalText(r load.Report) string {
	switch r.Arrival {
	case load.Constant:
		return "constant " + format.Rate(r.ArrivalRate)
	case load.Poisson:
		s := "poisson " + format.Rate(r.ArrivalRate)
		if r.BurstSize > 0 {
			s += fmt.Sprintf(" + %d every %s", r.BurstSize, format.Duration(time.Duration(r.BurstEveryS*float64(time.Second))))
		}
		return s
	}
	return "closed loop"
}

func overGrant(st Styles, pct float64) string {
	s := format.Fixed(pct, 2) + "%"
	if pct > 0 {
		return st.Bad.Render(s + " ✖ beyond the maximum")
	}
	return st.Good.Render(s + " ✔")
}

const maxHistRows = 8 // adjacent bands are merged to fit

func histogramLines(st Styles, bands []load.Band, w int) []string {
	if len(bands) == 0 {
		return nil
	}
	for len(bands) > maxHistRows {
		var merged []load.Band
		for pair := range slices.Chunk(bands, 2) {
			b := pair[len(pair)-1]
			if len(pair) == 2 {
				b.Count += pair[0].Count
			}
			merged = append(merged, b)
		}
		bands = merged
	}
	var total, top int64
	for _, b := range bands {
		total += b.Count
		top = max(top, b.Count)
	}
	labelW, countW := 9, max(6, len(format.GroupDigits(top))+1)
	barW := max(8, min(40, w-labelW-countW-8))
	lines := make([]string, 0, len(bands))
	for _, b := range bands {
		label := "≤ " + format.Latency(b.UpToMS)
		if b.UpToMS >= 3_600_000 {
			label = "> 5m"
		}
		share := float64(b.Count) / float64(max(1, total))
		bar, used := eighthCells(barW, float64(b.Count)/float64(max(1, top)))
		lines = append(lines, "  "+st.Label.Render(fmt.Sprintf("%-*s", labelW, label))+
			st.Title.Render(bar)+strings.Repeat(" ", barW-used)+
			padLeft(format.GroupDigits(b.Count), countW)+st.Subtle.Render(padLeft(format.Percent(share), 5)))
	}
	return lines
}

// RenderLoadComparison writes one row per strategy run, then what they show.
func RenderLoadComparison(st Styles, rs []load.Report, w int) string {
	w = max(w, 40)
	if len(rs) == 0 {
		return ""
	}
	r0 := rs[0]
	about := fmt.Sprintf("%s · %s · each run %s on a fresh key%s\n", arrivalText(r0), format.Plural(r0.Concurrency, "worker"),
		format.Seconds(r0.DurationS), onServer(r0.Server)) + specText(r0)
	lines := append(reportHead(st, "bucketctl load --compare", strings.TrimSuffix(r0.Key, ":"+string(r0.Strategy)), about, w), "")
	cols := []string{"strategy", "ops/s", "calls/req", "allowed", "max", "over-grant", "errors", "retries", "p99"}
	rows := [][]string{cols}
	for _, r := range rs {
		rows = append(rows, []string{string(r.Strategy), format.PerSecond(r.OpsPerSec),
			format.Fixed(r.RedisCallsPerRequest, 2), format.GroupDigits(r.Allowed),
			format.GroupDigits(r.TheoreticalMax), format.Fixed(r.OverGrantPct, 2) + "%",
			format.GroupDigits(r.Errors), format.GroupDigits(r.Retries), format.Latency(r.LatencyMS.P99)})
	}
	widths := make([]int, len(cols))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	tableW := 2 * (len(cols) - 1)
	for _, c := range widths {
		tableW += c
	}
	if tableW > w { // too narrow for the table: each run as its fields, wrapped
		for ri, row := range rows[1:] {
			f := []string{st.Value.Render(row[0])}
			for i := 1; i < len(row); i++ {
				v := row[i]
				if i == 5 && rs[ri].OverGrantPct > 0 {
					v = st.Bad.Render(v)
				}
				f = append(f, st.Label.Render(cols[i])+" "+v)
			}
			lines = append(lines, wrapJoin(f, "  ", "  ", w)...)
		}
		rows = rows[:0]
	}
	for ri, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = padLeft(c, widths[i])
			if i == 0 {
				cells[i] = fit(c, widths[i])
			}
			switch {
			case ri == 0:
				cells[i] = st.Header.Render(cells[i])
			case i == 5 && rs[ri-1].OverGrantPct > 0:
				cells[i] = st.Bad.Render(cells[i])
			case i == 6 && rs[ri-1].Errors > 0:
				cells[i] = st.Warn.Render(cells[i])
			}
		}
		lines = append(lines, trunc(strings.Join(cells, "  "), w))
	}
	lines = append(lines, "")
	for _, r := range rs {
		lines = append(lines, wrapLine("  "+st.Value.Render(fmt.Sprintf("%-*s", widths[0], r.Strategy))+"  "+verdict(st, r),
			strings.Repeat(" ", widths[0]+4), w)...)
	}
	if rs[0].Interrupted || rs[len(rs)-1].Interrupted {
		lines = append(lines, "", st.Warn.Render("interrupted: the runs so far"))
	}
	return strings.Join(lines, "\n")
}

func onServer(addr string) string {
	if addr == "" {
		return ""
	}
	return " · redis " + addr
}

// verdict says in a few words what a run of a comparison showed.
func verdict(st Styles, r load.Report) string {
	switch {
	case r.OverGrantPct > 0:
		return st.Bad.Render(fmt.Sprintf("over-granted: %s allowed where at most %s could be",
			format.GroupDigits(r.Allowed), format.GroupDigits(r.TheoreticalMax)))
	case r.Errors > 0 && r.Retries > 0:
		return st.Warn.Render(fmt.Sprintf("no over-grant, but %s retries and %s failed requests",
			format.GroupDigits(r.Retries), format.GroupDigits(r.Errors)))
	case r.Errors > 0:
		return st.Warn.Render(fmt.Sprintf("%s requests failed", format.GroupDigits(r.Errors)))
	}
	return st.Good.Render(fmt.Sprintf("exact: %s allowed, none beyond the maximum", format.GroupDigits(r.Allowed)))
}
