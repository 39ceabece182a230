//go:build ignore

// Command hyperfine_means prints the mean time of each command of a hyperfine JSON
// export, in milliseconds, one per line: scripts/bench/startup.sh reads them.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var r struct {
		Results []struct {
			Mean float64 `json:"mean"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, x := range r.Results {
		fmt.Printf("%.2f\n", x.Mean*1000)
	}
}
