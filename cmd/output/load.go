package output

import (
	"fmt"
	"strings"

	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui"
	"github.com/bucketctl/bucketctl/tui/format"
)

// PrintLoadPlan writes load's plan as a table, on stderr (before a question) with toErr.
func PrintLoadPlan(ios *iostreams.IOStreams, plans []load.Plan, yes, keep, toErr bool) error {
	io := *ios
	if toErr {
		io.Out, io.StdoutTTY = io.ErrOut, io.StderrTTY
	}
	t := NewTable(&io, "KEY", "HOLDS", "SPEC", "ACTION", "CHANGES")
	for _, p := range plans {
		tg := p.Target
		holds, action := "nothing", "create, load-test, delete at the end"
		switch {
		case tg.Exists() && !tg.IsBucket():
			holds, action = "a "+tg.Type+", not a bucket", "refused: it "+tg.Problem
		case tg.Exists():
			holds, action = "native bucket", "load-test, keep"
			if !yes {
				action += " (needs --yes)"
			}
		case keep:
			action = "create, load-test, keep"
		}
		spec, changes := "–", "nothing"
		if !tg.Exists() || tg.IsBucket() {
			spec = format.Tokens(p.Spec.Capacity) + " / " + format.Rate(p.Spec.Rate)
			switch {
			case p.StoredSpec:
				spec += " (stored)"
			case tg.Exists():
				spec += " (was " + format.Tokens(tg.Stored.Spec.Capacity) + " / " + format.Rate(tg.Stored.Spec.Rate) + ")"
			}
			changes = strings.Join(p.Changes, ", ")
		}
		t.Add(format.SafeKey(tg.Key), holds, spec, action, changes)
	}
	return t.Render()
}

// PrintLoad prints load's reports (one, or a comparison) on stdout, at width.
func PrintLoad(io *iostreams.IOStreams, outFormat string, compare bool, st tui.Styles, reports []load.Report, width int) error {
	if len(reports) == 0 {
		return nil
	}
	if outFormat != FormatTable {
		rounded := make([]load.Report, len(reports))
		for i, r := range reports {
			rounded[i] = JSONReport(r)
		}
		if compare {
			return WriteData(io.Out, outFormat, struct {
				Runs []load.Report `json:"runs"`
			}{rounded})
		}
		return WriteData(io.Out, outFormat, rounded[0])
	}
	var text string
	if compare {
		text = tui.RenderLoadComparison(st, reports, width)
	} else {
		text = tui.RenderLoadReport(st, reports[0], width)
	}
	_, err := fmt.Fprintln(io.Out, text)
	return err
}

// JSONReport rounds a load report for JSON and YAML.
func JSONReport(r load.Report) load.Report {
	r.ArrivalRate, r.Capacity, r.Rate, r.Cost = format.JSONSpec(r.ArrivalRate), format.JSONSpec(r.Capacity), format.JSONSpec(r.Rate), format.JSONSpec(r.Cost)
	r.DurationS, r.BurstEveryS = format.JSONSeconds(r.DurationS), format.JSONSeconds(r.BurstEveryS)
	r.RedisCallsPerRequest, r.OpsPerSec, r.OverGrantPct = format.Round3(r.RedisCallsPerRequest), format.JSONRate(r.OpsPerSec), format.Round3(r.OverGrantPct)
	l := &r.LatencyMS
	l.Min, l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max = format.Round3(l.Min), format.Round3(l.Mean), format.Round3(l.P50), format.Round3(l.P90), format.Round3(l.P99), format.Round3(l.P999), format.Round3(l.Max)
	bands := make([]load.Band, len(r.Histogram))
	for i, b := range r.Histogram {
		bands[i] = load.Band{UpToMS: format.Round3(b.UpToMS), Count: b.Count}
	}
	r.Histogram = bands
	return r
}
