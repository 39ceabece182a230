package main

import (
	"strings"
	"testing"
	"time"
)

// Lines as make bench's four commands print them (trimmed to the ones read).
const sample = `BenchmarkTake/paired/hot_key/g1-2         	    5254	   1352536 ns/op	    72217 bucketctl-ns/take	    450191 bucketctl_direct-ns/take	    61701 redis_rate-ns/take	    1382 B/op	      35 allocs/op
BenchmarkTake/paired/hot_key/g1#01-2      	     818	   1644318 ns/op	    90000 bucketctl-ns/take	    544718 bucketctl_direct-ns/take	    95000 redis_rate-ns/take	    1381 B/op	      35 allocs/op
BenchmarkTake/paired/hot_key/g1#02-2      	     860	   1177821 ns/op	    60000 bucketctl-ns/take	    339595 bucketctl_direct-ns/take	    70000 redis_rate-ns/take	    1382 B/op	      35 allocs/op
BenchmarkTake/bucketctl/per_key/g16-2         	   17043	     72217 ns/op	        37.15 cli-cpu-µs/op	     471 B/op	      13 allocs/op
BenchmarkTake/redis_rate/per_key/g16-2        	   16747	     61701 ns/op	        31.10 cli-cpu-µs/op	     695 B/op	      19 allocs/op
BenchmarkTake/bucketctl/per_key/g16#01-2         	   17043	     90000 ns/op	        37.15 cli-cpu-µs/op	     471 B/op	      13 allocs/op
BenchmarkTake/redis_rate/per_key/g16#01-2        	   16747	     95000 ns/op	        31.10 cli-cpu-µs/op	     695 B/op	      19 allocs/op
BenchmarkTake/bucketctl/per_key/g16#02-2         	   17043	     60000 ns/op	        37.15 cli-cpu-µs/op	     471 B/op	      13 allocs/op
BenchmarkTake/redis_rate/per_key/g16#02-2        	   16747	     70000 ns/op	        31.10 cli-cpu-µs/op	     695 B/op	      19 allocs/op
BenchmarkServerCost/allow-2   	       1	3396911078 ns/op	        11.48 bucketctl-srv-µs/decision	         1.937 ratio	         5.926 redis_rate-srv-µs/decision
BenchmarkServerCost/deny-2   	       1	3396911078 ns/op	        9.00 bucketctl-srv-µs/decision	         1.200 ratio	         7.500 redis_rate-srv-µs/decision
load average before: 2.68 1.75 2.35
medians of the counted pairs (ops/s):
  -P 1   redis-benchmark     47214.35   bucketctl load --pipeline 1       56002.57   ratio 1.186 (median of the ratios of 5 of 9 pairs (5 wanted), those with steal ≤ 3%; ratio of the medians 1.100; median of all pairs 0.950)
  -P 16  redis-benchmark    109170.30   bucketctl load --pipeline 16     102818.95   ratio 0.942 (median of the ratios of 3 of 20 pairs (5 wanted), those with steal ≤ 2.5%; ratio of the medians 0.950; median of all pairs 0.942)
load average after: 3.10 1.90 2.39
load average before: 0.82 1.35 2.30
package init (GODEBUG=inittrace=1 bucketctl version, sum of clock, median of 21): 0.883 ms
  the libraries' floor, in turn with it:                              0.918 ms
load average after:  0.90 1.35 2.30
inspect KEY vs redis-cli get KEY:      A 5.054 ms  B 3.368 ms  A/B 1.483 (median of 20 pairs; min 0.522, max 2.623)
load average before: 1.45 1.66 2.71
list of 1000000 native buckets vs its floor (SCAN + pipelined GET): A 8791.982 ms  B 5884.196 ms  A/B 1.616 (median of 5 pairs; min 1.025, max 1.827)
load average after: 1.49 1.67 2.70
`

func TestTable(t *testing.T) {
	var echo, out strings.Builder
	fs, err := read(strings.NewReader(sample), &echo)
	if err != nil {
		t.Fatal(err)
	}
	if echo.String() != sample {
		t.Errorf("input not echoed as read:\n%s", echo.String())
	}
	missing, ok := table(&out, fs, time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC))
	got := out.String()
	for _, want := range []string{
		"measured 2026-11-25 18:00 UTC, ",
		"1-minute load average 0.82–3.10 around the runs",
		"| server script time per decision, allows only (µs, INFO commandstats, median of 3) | 11.48 | redis_rate 5.93 | 1.94× (≤ 1 wanted) |",
		"| server script time per decision, denies only (µs, INFO commandstats, median of 3) | 9.00 | redis_rate 7.50 | 1.20× (≤ 1.4 wanted) |",
		"| Take vs Allow, hot key, 1 goroutines (ns/op, medians of 3 passes, decisions paired; ratio: median of the passes' ratios) | 72217 | 70000 | 1.06× (≥ 1 wanted) |",
		"| Take vs Allow, per key, 16 goroutines (ns/op, medians of 3 interleaved passes; ratio: median of the passes' ratios) | 72217 | 70000 | 1.06× (≥ 1 wanted) |",
		"| `load --pipeline 1` vs `redis-benchmark -P 1`, same script (ops/s, medians of the 5 of 9 pairs with steal ≤ 3%; ratio: median of their ratios) | 56003 | 47214 | 1.19× (≥ 0.9 wanted) |",
		"| `load --pipeline 16` vs `redis-benchmark -P 16`, same script (ops/s, medians of the 3 of 20 pairs with steal ≤ 2.5%; ratio: median of their ratios) | 102819 | 109170 | 0.94× (≥ 0.9 wanted; only 3 pairs of 5 wanted: the host was busy, run it again) |",
		"| package init, `GODEBUG=inittrace=1 bucketctl version` (ms, median of 21) | 0.88 | libraries' floor 0.92 | (≤ 2 ms wanted) |",
		"| `inspect KEY` vs `redis-cli get KEY` (ms, median of 20 pairs) | 5.05 | 3.37 | 1.48× (≤ 1.3 wanted) |",
		"| `list` of 1000000 native buckets vs SCAN + pipelined GET (`scanfloor`) (s, median of 5 pairs; ratio: median of the pairs' ratios, 1.02–1.83) | 8.79 | 5.88 | 1.62× (≤ 1.5 wanted) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if ok {
		t.Errorf("ratios of 1.94 (≤ 1 wanted) and 1.48 (≤ 1.3 wanted) reported as meeting their goals")
	}
	if len(missing) != 0 {
		t.Errorf("missing %q, though every command printed its figures", missing)
	}
}

func TestTableMissing(t *testing.T) {
	// Only the load script ran: the rest are missing, by name.
	in := "  -P 1   redis-benchmark 10.0   bucketctl load --pipeline 1   10.0   ratio 1.000 (median of the ratios of 3 of 4 pairs (3 wanted), those with steal ≤ 3%; x)\n"
	fs, err := read(strings.NewReader(in), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	missing, ok := table(&out, fs, time.Now())
	if !ok {
		t.Errorf("a ratio of 1.0 (≥ 0.9 wanted) reported as missing its goal")
	}
	got := strings.Join(missing, "\n")
	for _, want := range []string{"ServerCost", "Take$", "load -P 16", "package init", "inspect vs redis-cli", "list-vs-floor.sh"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing figures %q do not name %q", missing, want)
		}
	}
	if strings.Contains(got, "load -P 1 ") {
		t.Errorf("load -P 1 reported missing though it was read: %q", missing)
	}
}

func TestTableBusyHostIsNoFigure(t *testing.T) {
	in := "  -P 1   redis-benchmark 10.0   bucketctl load --pipeline 1   12.0   ratio 1.200 (median of the ratios of 2 of 20 pairs (5 wanted), those with steal ≤ 3%; x)\n" +
		"list of 1000000 native buckets vs its floor (SCAN + pipelined GET): A 5597.740 ms  B 3787.163 ms  A/B 1.100 (median of 4 pairs; min 1.019, max 1.149; 16 more not counted: the host's steal above 3%; too few, 5 wanted: the host was busy)\n"
	fs, err := read(strings.NewReader(in), &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if _, ok := table(&out, fs, time.Now()); ok {
		t.Errorf("2 pairs of 5 wanted reported as meeting the goal:\n%s", out.String())
	}
	for _, want := range []string{
		"1.20× (≥ 0.9 wanted; only 2 pairs of 5 wanted: the host was busy, run it again)",
		"1.10× (≤ 1.5 wanted; too few pairs: the host was busy, run it again)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("a row does not say %q:\n%s", want, out.String())
		}
	}
}
