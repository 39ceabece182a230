package cmd

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
)

func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, s := range c.Commands() {
		out = append(out, allCommands(s)...)
	}
	return out
}

// assertFull fails unless each key is a native bucket that exists, full, with its spec: what
// a reset leaves of a native bucket (read through the library, whatever the storage).
func assertFull(t *testing.T, c redis.UniversalClient, keys ...string) {
	t.Helper()
	states, err := bucket.NewStore(c).Inspect(context.Background(), keys, func(string) bucket.Target { return bucket.Target{} })
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if !s.Exists || !s.Layout.Native || s.Problem != "" || !s.HasSpec() || s.Tokens != s.Spec.Capacity {
			t.Errorf("%s after a reset: exists %v layout %s problem %q tokens %v of %v, want a full native bucket",
				s.Key, s.Exists, s.Layout.Name, s.Problem, s.Tokens, s.Spec.Capacity)
		}
	}
}
