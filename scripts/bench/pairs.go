//go:build ignore

// Command pairs times two commands side by side, as whole processes: A and B run in turn
// (A B A B ...) after a few warm-up runs, each run timed from its start to its exit, and
// the ratio A/B is taken pair by pair, so a machine whose speed drifts during the run
// moves both sides of each pair alike. It prints the median time of each command and the
// median of the pairs' ratios, and the spread (min and max of the ratios).
//
// Usage: go run scripts/bench/pairs.go [-n PAIRS] [-warmup N] -a 'COMMAND A' -b 'COMMAND B'
//
// A command is split on spaces (no shell, no quoting): its output goes to /dev/null; a
// command that fails stops the measurement with its error.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 20, "pairs to time")
	warm := flag.Int("warmup", 3, "untimed runs of each command first")
	a := flag.String("a", "", "command A (the one measured)")
	b := flag.String("b", "", "command B (the reference)")
	flag.Parse()
	if *a == "" || *b == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/bench/pairs.go [-n PAIRS] [-warmup N] -a 'COMMAND A' -b 'COMMAND B'")
		os.Exit(2)
	}
	ca, cb := strings.Fields(*a), strings.Fields(*b)
	for i := 0; i < *warm; i++ {
		once(ca)
		once(cb)
	}
	var ta, tb, ratio []float64
	for i := 0; i < *n; i++ {
		x, y := once(ca), once(cb)
		ta, tb, ratio = append(ta, x), append(tb, y), append(ratio, x/y)
	}
	slices.Sort(ratio)
	fmt.Printf("A %.3f ms  B %.3f ms  A/B %.3f (median of %d pairs; min %.3f, max %.3f)\n",
		median(ta)*1e3, median(tb)*1e3, median(ratio), *n, ratio[0], ratio[len(ratio)-1])
}

// once runs the command and returns its wall time in seconds.
func once(args []string) float64 {
	c := exec.Command(args[0], args[1:]...)
	start := time.Now()
	if err := c.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", strings.Join(args, " "), err)
		os.Exit(1)
	}
	return time.Since(start).Seconds()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
