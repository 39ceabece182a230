// Command bucketctl inspects, resets, watches and load-tests token-bucket rate limiters
// stored in Redis.
package main

import (
	"os"

	"github.com/bucketctl/bucketctl/cmd"
)

func main() { os.Exit(cmd.Main()) }
