package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	// A line: BenchmarkTake/bucketctl/hot_key/g16#02-2   123   4567 ns/op   ... metrics
	// (#02: the third pass of a name run again). One goroutine's passes are
	// BenchmarkTake/paired/hot_key/g1, each competitor's time a metric: 4567 redis_rate-ns/take.
	line = regexp.MustCompile(`^Benchmark(\S+?)(?:#\d+)?(?:-\d+)?\s+\d+\s+(.*)$`)
	// load-vs-redis-benchmark.sh's medians of the pairs it counted:
	//   -P 16  redis-benchmark 120481.93   bucketctl load --pipeline 16   119128.20   ratio 0.989 (median of the ratios of 5 of 7 pairs (5 wanted), those with steal ≤ 3%; ...)
	loadLine = regexp.MustCompile(`^\s*-P (\d+)\s+redis-benchmark\s+([\d.]+)\s+bucketctl load --pipeline \d+\s+([\d.]+)\s+ratio ([\d.]+) \(median of the ratios of (\d+) of (\d+) pairs \((\d+) wanted\), those with steal ≤ ([\d.]+)%`)
	// startup.sh's figures.
	initLine    = regexp.MustCompile(`^package init \(.*median of (\d+)\): ([\d.]+) ms`)
	floorLine   = regexp.MustCompile(`^\s*the libraries' floor, in turn with it:\s+([\d.]+) ms`)
	inspectLine = regexp.MustCompile(`^inspect KEY vs redis-cli get KEY:\s+A ([\d.]+) ms\s+B ([\d.]+) ms\s+A/B ([\d.]+) \(median of (\d+) pairs`)
	// list-vs-floor.sh's pairs.
	listLine = regexp.MustCompile(`^list of (\d+) native buckets vs its floor .*:\s+A ([\d.]+) ms\s+B ([\d.]+) ms\s+A/B ([\d.]+) \(median of (\d+) pairs; min ([\d.]+), max ([\d.]+)`)
	// Both scripts print the load average before and after their runs.
	loadavgLine = regexp.MustCompile(`^load average (?:before|after):\s+([\d.]+)`)
)

func metrics(rest string) map[string]float64 {
	out := map[string]float64{}
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			out[f[i+1]] = v
		}
	}
	return out
}

// figures are what the commands of `make bench` printed.
type figures struct {
	take     map[string][]float64          // impl/mode/gN -> ns/op of each pass, in order
	cost     map[string]map[string]float64 // allow, deny -> metrics
	load     map[string]loadFigure         // by P
	init     []float64                     // ms, the libraries' floor's ms, runs
	inspect  []float64                     // bucketctl ms, redis-cli ms, ratio, pairs
	list     []float64                     // buckets, list ms, floor ms, ratio, pairs, min, max
	listBusy bool                          // fewer pairs counted than wanted (steal)
	loadavg  []float64                     // 1-minute load averages
}

// loadFigure is the load script's line for one P.
type loadFigure struct {
	rb, ours, ratio             float64 // medians of the counted pairs: ops/s, and their ratios
	counted, run, wanted, steal float64 // pairs, and the steal bound (%) of those counted
}

func num(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

// median of the runs, 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Sorted(slices.Values(v))
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// read echoes in to echo and collects the figures.
func read(in io.Reader, echo io.Writer) (figures, error) {
	fs := figures{take: map[string][]float64{}, cost: map[string]map[string]float64{}, load: map[string]loadFigure{}}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		t := sc.Text()
		fmt.Fprintln(echo, t)
		if m := line.FindStringSubmatch(t); m != nil {
			name, ms := m[1], metrics(m[2])
			switch {
			case strings.HasPrefix(name, "ServerCost/"):
				fs.cost[strings.TrimPrefix(name, "ServerCost/")] = ms
			case strings.HasPrefix(name, "Take/paired/"):
				// One goroutine's pass: every competitor's ns per decision, as metrics.
				row := strings.TrimPrefix(name, "Take/paired/")
				for unit, v := range ms {
					if impl, ok := strings.CutSuffix(unit, "-ns/take"); ok {
						fs.take[impl+"/"+row] = append(fs.take[impl+"/"+row], v)
					}
				}
			case strings.HasPrefix(name, "Take/"):
				k := strings.TrimPrefix(name, "Take/")
				fs.take[k] = append(fs.take[k], ms["ns/op"])
			}
		} else if m := loadLine.FindStringSubmatch(t); m != nil {
			fs.load[m[1]] = loadFigure{rb: num(m[2]), ours: num(m[3]), ratio: num(m[4]),
				counted: num(m[5]), run: num(m[6]), wanted: num(m[7]), steal: num(m[8])}
		} else if m := initLine.FindStringSubmatch(t); m != nil {
			fs.init = []float64{num(m[2]), 0, num(m[1])}
		} else if m := floorLine.FindStringSubmatch(t); m != nil && fs.init != nil {
			fs.init[1] = num(m[1])
		} else if m := listLine.FindStringSubmatch(t); m != nil {
			for _, v := range m[1:] {
				fs.list = append(fs.list, num(v))
			}
			fs.listBusy = strings.Contains(t, "; too few, ")
		} else if m := inspectLine.FindStringSubmatch(t); m != nil {
			fs.inspect = []float64{num(m[1]), num(m[2]), num(m[3]), num(m[4])}
		} else if m := loadavgLine.FindStringSubmatch(t); m != nil {
			fs.loadavg = append(fs.loadavg, num(m[1]))
		}
	}
	return fs, sc.Err()
}

// table prints the comparison table and returns the figures that are missing (their
// command failed or printed nothing) and whether every figure present meets its goal.
func table(w io.Writer, fs figures, when time.Time) (missing []string, ok bool) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "measured %s, %d cores", when.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU())
	if len(fs.loadavg) > 0 {
		lo, hi := fs.loadavg[0], fs.loadavg[0]
		for _, v := range fs.loadavg {
			lo, hi = min(lo, v), max(hi, v)
		}
		fmt.Fprintf(w, ", 1-minute load average %.2f–%.2f around the runs", lo, hi)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| comparison (same redis-server, loopback) | bucketctl | reference | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	ok = true
	for _, w8 := range []struct {
		name   string
		goal   float64
		plural string
	}{{"allow", 1, "allows"}, {"deny", 1.4, "denies"}} {
		c, found := fs.cost[w8.name]
		if !found {
			missing = append(missing, "server script time per decision, "+w8.plural+" only (go test ./bucket -bench ServerCost)")
			continue
		}
		r := c["ratio"]
		fmt.Fprintf(w, "| server script time per decision, %s only (µs, INFO commandstats, median of 3) | %.2f | redis_rate %.2f | %.2f× (≤ %g wanted) |\n",
			w8.plural, c["bucketctl-srv-µs/decision"], c["redis_rate-srv-µs/decision"], r, w8.goal)
		ok = ok && r <= w8.goal
	}
	takes := 0
	for _, mode := range []string{"hot_key", "per_key"} {
		for _, g := range []string{"g1", "g16", "g64"} {
			runs, refs := fs.take["bucketctl/"+mode+"/"+g], fs.take["redis_rate/"+mode+"/"+g]
			ours, theirs := median(runs), median(refs)
			if ours == 0 || theirs == 0 {
				continue
			}
			takes++
			// Pass i of each ran side by side in time: the ratio is the median of the passes' ratios.
			var ratios []float64
			for i := range min(len(runs), len(refs)) {
				ratios = append(ratios, refs[i]/runs[i])
			}
			r := median(ratios)
			how := "interleaved passes"
			if g == "g1" {
				how = "passes, decisions paired"
			}
			fmt.Fprintf(w, "| Take vs Allow, %s, %s goroutines (ns/op, medians of %d %s; ratio: median of the passes' ratios) | %.0f | %.0f | %.2f× (≥ 1 wanted) |\n",
				strings.ReplaceAll(mode, "_", " "), strings.TrimPrefix(g, "g"), len(runs), how, ours, theirs, r)
			ok = ok && r >= 1
		}
	}
	if takes == 0 {
		missing = append(missing, "Take vs Allow (go test ./bucket -bench 'Take$')")
	}
	for _, p := range []string{"1", "16"} {
		l, found := fs.load[p]
		if !found {
			missing = append(missing, "load -P "+p+" (scripts/bench/load-vs-redis-benchmark.sh)")
			continue
		}
		busy := ""
		if l.counted < l.wanted {
			busy = fmt.Sprintf("; only %.0f pairs of %.0f wanted: the host was busy, run it again", l.counted, l.wanted)
		}
		fmt.Fprintf(w, "| `load --pipeline %s` vs `redis-benchmark -P %s`, same script (ops/s, medians of the %.0f of %.0f pairs with steal ≤ %g%%; ratio: median of their ratios) | %.0f | %.0f | %.2f× (≥ 0.9 wanted%s) |\n",
			p, p, l.counted, l.run, l.steal, l.ours, l.rb, l.ratio, busy)
		ok = ok && l.ratio >= 0.9 && busy == ""
	}
	if l := fs.list; l != nil {
		busy := ""
		if fs.listBusy {
			busy = "; too few pairs: the host was busy, run it again"
		}
		fmt.Fprintf(w, "| `list` of %.0f native buckets vs SCAN + pipelined GET (`scanfloor`) (s, median of %.0f pairs; ratio: median of the pairs' ratios, %.2f–%.2f) | %.2f | %.2f | %.2f× (≤ 1.5 wanted%s) |\n",
			l[0], l[4], l[5], l[6], l[1]/1000, l[2]/1000, l[3], busy)
		ok = ok && l[3] <= 1.5 && !fs.listBusy
	} else {
		missing = append(missing, "list vs its floor (scripts/bench/list-vs-floor.sh)")
	}
	if fs.init != nil {
		fmt.Fprintf(w, "| package init, `GODEBUG=inittrace=1 bucketctl version` (ms, median of %.0f) | %.2f | libraries' floor %.2f | (≤ 2 ms wanted) |\n",
			fs.init[2], fs.init[0], fs.init[1])
		ok = ok && fs.init[0] <= 2
	} else {
		missing = append(missing, "package init (scripts/bench/startup.sh)")
	}
	if fs.inspect != nil {
		fmt.Fprintf(w, "| `inspect KEY` vs `redis-cli get KEY` (ms, median of %.0f pairs) | %.2f | %.2f | %.2f× (≤ 1.3 wanted) |\n",
			fs.inspect[3], fs.inspect[0], fs.inspect[1], fs.inspect[2])
		ok = ok && fs.inspect[2] <= 1.3
	} else {
		missing = append(missing, "inspect vs redis-cli (scripts/bench/startup.sh)")
	}
	return missing, ok
}

func main() {
	fs, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	missing, ok := table(os.Stdout, fs, time.Now())
	if !ok {
		fmt.Println("\nbenchtable: a figure misses its goal (see the table)")
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "benchtable: no figures of %s: its command failed (see above)\n", strings.Join(missing, "; "))
		os.Exit(1)
	}
}
