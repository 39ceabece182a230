package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// A line: BenchmarkTake/bucketctl/hot_key/g16-2   123   4567 ns/op   ... metrics.
var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

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

func main() {
	take := map[string]float64{} // impl/mode/gN -> ns/op
	var cost map[string]float64
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println(sc.Text())
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, ms := m[1], metrics(m[2])
		switch {
		case name == "ServerCost":
			cost = ms
		case strings.HasPrefix(name, "Take/"):
			take[strings.TrimPrefix(name, "Take/")] = ms["ns/op"]
		}
	}
	fmt.Println()
	fmt.Println("| comparison (same redis-server, loopback) | bucketctl | redis_rate | ratio |")
	fmt.Println("|---|---:|---:|---:|")
	ok := true
	if cost != nil {
		r := cost["ratio"]
		fmt.Printf("| server script time per decision (µs, INFO commandstats, median of 3) | %.2f | %.2f | %.2f× (≤ 1 wanted) |\n",
			cost["bucketctl-srv-µs/decision"], cost["redis_rate-srv-µs/decision"], r)
		ok = ok && r <= 1
	}
	for _, mode := range []string{"hot_key", "per_key"} {
		for _, g := range []string{"g1", "g16", "g64"} {
			ours, theirs := take["bucketctl/"+mode+"/"+g], take["redis_rate/"+mode+"/"+g]
			if ours == 0 || theirs == 0 {
				continue
			}
			r := theirs / ours
			fmt.Printf("| Take vs Allow, %s, %s goroutines (ns/op) | %.0f | %.0f | %.2f× (≥ 1 wanted) |\n",
				strings.ReplaceAll(mode, "_", " "), strings.TrimPrefix(g, "g"), ours, theirs, r)
			ok = ok && r >= 1
		}
	}
	if !ok {
		fmt.Println("\nbenchtable: a ratio is on the wrong side of 1 (see the table)")
	}
}
