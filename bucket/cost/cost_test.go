package cost_test

import (
	"context"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestCounter: a command and a pipeline of three made with the counter's context are 4
// commands in 2 round trips; a request without it is not counted.
func TestCounter(t *testing.T) {
	t.Parallel()
	c := redistest.Start(t).Client(t)
	cost.Install(c)
	cost.Install(c) // twice: still one hook
	var n cost.Counter
	ctx := cost.With(context.Background(), &n)
	if err := c.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	pipe.Get(ctx, "k")
	pipe.Incr(ctx, "k")
	pipe.Get(ctx, "k")
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), "k").Err(); err != nil {
		t.Fatal(err)
	}
	if n.Commands() != 4 || n.RoundTrips() != 2 {
		t.Fatalf("counted %d commands in %d round trips, want 4 in 2", n.Commands(), n.RoundTrips())
	}
}
