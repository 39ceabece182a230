//go:build ignore

// Command pairs times two commands side by side, as whole processes: A and B run in turn
// (A B A B ...) after a few warm-up runs, each run timed from its start to its exit, and
// the ratio A/B is taken pair by pair, so a machine whose speed drifts during the run
// moves both sides of each pair alike. It prints the median time of each command and the
// median of the pairs' ratios, and the spread (min and max of the ratios). With -steal, a
// pair counts only when the host of a virtual machine took at most that percentage of the
// cores during each of its runs (steal, in /proc/stat, counted in 10 ms ticks: for runs of
// a second or more); pairs go on until -n count or -max ran.
//
// Usage: go run scripts/bench/pairs.go [-n PAIRS] [-warmup N] [-steal PCT] [-max PAIRS] -a 'COMMAND A' -b 'COMMAND B'
//
// A command is split on spaces (no shell, no quoting): its output goes to /dev/null; a
// command that fails stops the measurement with its error.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 20, "pairs to time")
	warm := flag.Int("warmup", 3, "untimed runs of each command first")
	a := flag.String("a", "", "command A (the one measured)")
	b := flag.String("b", "", "command B (the reference)")
	maxSteal := flag.Float64("steal", 0, "the host's steal, percent of the cores, above which a pair does not count (0: every pair counts)")
	maxPairs := flag.Int("max", 0, "pairs to run at most (0: 4 x -n)")
	flag.Parse()
	if *maxPairs == 0 {
		*maxPairs = 4 * *n
	}
	if *a == "" || *b == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/bench/pairs.go [-n PAIRS] [-warmup N] [-steal PCT] [-max PAIRS] -a 'COMMAND A' -b 'COMMAND B'")
		os.Exit(2)
	}
	ca, cb := strings.Fields(*a), strings.Fields(*b)
	for i := 0; i < *warm; i++ {
		once(ca)
		once(cb)
	}
	var ta, tb, ratio []float64
	tried := 0
	for ; len(ratio) < *n && tried < *maxPairs; tried++ {
		x, sx := once(ca)
		y, sy := once(cb)
		if *maxSteal == 0 || sx <= *maxSteal && sy <= *maxSteal {
			ta, tb, ratio = append(ta, x), append(tb, y), append(ratio, x/y)
		}
	}
	if len(ratio) == 0 {
		fmt.Fprintf(os.Stderr, "pairs: the host took more than %g%% of the cores in each of %d pairs; run it when the host is quieter\n", *maxSteal, tried)
		os.Exit(1)
	}
	slices.Sort(ratio)
	fmt.Printf("A %.3f ms  B %.3f ms  A/B %.3f (median of %d pairs; min %.3f, max %.3f",
		median(ta)*1e3, median(tb)*1e3, median(ratio), len(ratio), ratio[0], ratio[len(ratio)-1])
	if *maxSteal > 0 {
		fmt.Printf("; %d more not counted: the host's steal above %g%%", tried-len(ratio), *maxSteal)
	}
	if len(ratio) < *n {
		fmt.Printf("; too few, %d wanted: the host was busy", *n)
	}
	fmt.Println(")")
}

// once runs the command and returns its wall time in seconds and the percentage of the
// cores' time the host took meanwhile.
func once(args []string) (float64, float64) {
	c := exec.Command(args[0], args[1:]...)
	s0, start := steal(), time.Now()
	if err := c.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", strings.Join(args, " "), err)
		os.Exit(1)
	}
	wall := time.Since(start).Seconds()
	return wall, 100 * float64(steal()-s0) / (wall * userHZ * float64(runtime.NumCPU()))
}

// userHZ is the unit of /proc/stat's times, 100 a second on Linux.
const userHZ = 100

// steal is the CPU time the host has taken from this machine, in 1/userHZ s; 0 where
// /proc/stat is missing or has no steal column.
func steal() int64 {
	b, _ := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	v, _ := strconv.ParseInt(f[8], 10, 64)
	return v
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
