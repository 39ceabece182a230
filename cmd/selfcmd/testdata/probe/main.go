// probe prints selfcmd.Current: the test runs it with 'go run', as the demo would be.
package main

import (
	"fmt"

	"github.com/bucketctl/bucketctl/cmd/selfcmd"
)

func main() { fmt.Println(selfcmd.Current()) }
