package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/load"
)

// overGrantReport is a multi-strategy run that over-granted, with long figures everywhere.
func overGrantReport() load.Report {
	return load.Report{Server: "127.0.0.1:6379", Key: "bucketctl:load:k:multi", Strategy: load.Multi,
		Concurrency: 64, Pipeline: 1, Capacity: 20, Rate: 10, Cost: 1, DurationS: 2.004,
		Requests: 1_234_567, Allowed: 173, Denied: 1_234_394, Errors: 12_345, Retries: 0, Unsent: 54_321,
		RedisCalls: 3_703_701, RedisCallsPerRequest: 3, OpsPerSec: 616_051.2,
		TheoreticalMax: 40, OverGrantPct: 443.33,
		LatencyMS:    load.Latency{P50: 0.705, P90: 12.94, P99: 123.4, P999: 1234.5, Max: 65432.1},
		Histogram:    []load.Band{{UpToMS: 1, Count: 1_000_000}, {UpToMS: 100, Count: 234_567}},
		ErrorSamples: []load.ErrorSample{{Message: "dial tcp 127.0.0.1:6379: connect: connection refused by the server at the far end", Count: 12_345}},
	}
}

// The report never drops text: a line that does not fit is wrapped between its fields,
// never cut with "…", at any width.
func TestLoadReportWrapsInsteadOfCutting(t *testing.T) {
	r := overGrantReport()
	words := []string{"bucketctl:load:k:multi", "requests", "1,234,567", "throughput", "redis calls/request", "3.00",
		"allowed", "173", "denied", "1,234,394", "errors", "12,345", "unsent", "54,321",
		"theoretical max", "40", "(capacity + rate × 2.004s)", "over-grant", "443.33%", "✖ beyond the maximum",
		"connection refused by the server at the far end", "raise --concurrency",
		"latency", "p50 705µs", "p90 12.9ms", "p99 123ms", "p99.9 1.2s", "max 1m5s"}
	for _, w := range []int{40, 60, 80} {
		out := ansi.Strip(RenderLoadReport(testStyles, r, w))
		if strings.Contains(out, "…") {
			t.Errorf("width %d: cut with …:\n%s", w, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("width %d: a line of %d cells: %q", w, n, l)
			}
		}
		// Fields may continue on the next line, never lose a word.
		flat := strings.Join(strings.Fields(out), " ")
		for _, word := range words {
			if !strings.Contains(flat, word) {
				t.Errorf("width %d: %q is missing:\n%s", w, word, out)
			}
		}
	}
}

// The comparison too: at a width too narrow for its table, each run's fields wrap.
func TestLoadComparisonWrapsInsteadOfCutting(t *testing.T) {
	multi := overGrantReport()
	lua := overGrantReport()
	lua.Strategy, lua.Key, lua.Allowed, lua.OverGrantPct, lua.Errors = load.Lua, "bucketctl:load:k:lua", 40, 0, 0
	for _, w := range []int{40, 60, 80, 120} {
		out := ansi.Strip(RenderLoadComparison(testStyles, []load.Report{lua, multi}, w))
		if strings.Contains(out, "…") {
			t.Errorf("width %d: cut with …:\n%s", w, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("width %d: a line of %d cells: %q", w, n, l)
			}
		}
		flat := strings.Join(strings.Fields(out), " ")
		for _, word := range []string{"bucketctl:load:k", "lua", "multi", "443.33%", "12,345", "123ms",
			"over-granted: 173 allowed where at most 40 could be", "exact: 40 allowed, none beyond the maximum"} {
			if !strings.Contains(flat, word) {
				t.Errorf("width %d: %q is missing:\n%s", w, word, out)
			}
		}
	}
}
