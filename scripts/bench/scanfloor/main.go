package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts/bench/loopback"
)

func main() {
	match := flag.String("match", "*", "SCAN MATCH pattern")
	count := flag.Int64("count", 500, "SCAN COUNT hint")
	c := loopback.Client("scanfloor", 2)
	defer c.Close()
	ctx := context.Background()
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	defer out.Flush()
	var cursor uint64
	n := 0
	for {
		keys, next, err := c.Scan(ctx, cursor, *match, *count).Result()
		if err != nil {
			fmt.Fprintln(os.Stderr, "scanfloor:", err)
			os.Exit(1)
		}
		pipe := c.Pipeline()
		gets := make([]*redis.StringCmd, len(keys))
		for i, k := range keys {
			gets[i] = pipe.Get(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil && !isReplyErr(err) {
			fmt.Fprintln(os.Stderr, "scanfloor:", err)
			os.Exit(1)
		}
		for i, k := range keys {
			out.WriteString(k)
			out.WriteByte(' ')
			out.WriteString(strconv.Itoa(len(gets[i].Val())))
			out.WriteByte('\n')
		}
		n += len(keys)
		if cursor = next; cursor == 0 {
			break
		}
	}
	fmt.Fprintf(os.Stderr, "scanfloor: %d keys\n", n)
}

// isReplyErr: one GET's error reply (WRONGTYPE on a key that is not a string), not a failed
// round trip.
func isReplyErr(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}
