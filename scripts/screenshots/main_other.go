//go:build !linux

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "screenshots: drawing the pictures needs Linux pseudo-terminals; the committed ones stay")
	os.Exit(1)
}
