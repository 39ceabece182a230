package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// CommandCalls reads the server's INFO commandstats: the calls of each command so far, by
// lower-case name (subcommands as "script|load").
func CommandCalls(tb testing.TB, c *redis.Client) map[string]int {
	tb.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	calls := map[string]int{}
	for _, l := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				calls[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.Atoi(v)
			}
		}
	}
	return calls
}
