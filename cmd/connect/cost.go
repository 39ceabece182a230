package connect

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui"
)

// CostCounter counts what one operation costs Redis: commands sent and round trips (a
// single command or a pipeline to one node is one round trip). It rides in the context, so
// other users of the same client (a demo's traffic, a reset) are not counted.
type CostCounter struct {
	commands, roundTrips, scans atomic.Int64
}

func (c *CostCounter) Cost() tui.Cost {
	return tui.Cost{Commands: int(c.commands.Load()), RoundTrips: int(c.roundTrips.Load())}
}

type costKey struct{}

// WithCostCounter returns ctx carrying c: the requests made with it are counted in c.

func WithCostCounter(ctx context.Context, c *CostCounter) context.Context {
	return context.WithValue(ctx, costKey{}, c)
}

func costFrom(ctx context.Context) *CostCounter {
	c, _ := ctx.Value(costKey{}).(*CostCounter)
	return c
}

// costHook is the go-redis hook that feeds the counter of the context, if any.
type costHook struct{}

func (costHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// handshake reports a command go-redis sends to set up a new connection: it is the
// pool's cost, not the refresh's, and counting it would make the figure jump whenever the
// pool dials.
func handshake(cmd redis.Cmder) bool {
	switch strings.ToLower(cmd.Name()) {
	case "hello", "auth", "client", "select", "readonly":
		return true
	}
	return false
}

func (costHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c := costFrom(ctx); c != nil && !handshake(cmd) {
			c.commands.Add(1)
			c.roundTrips.Add(1)
			if strings.EqualFold(cmd.Name(), "scan") {
				c.scans.Add(1)
			}
		}
		return next(ctx, cmd)
	}
}

func (costHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if c := costFrom(ctx); c != nil {
			n := int64(0)
			for _, cmd := range cmds {
				if !handshake(cmd) {
					n++
				}
			}
			if n > 0 {
				c.commands.Add(n)
				c.roundTrips.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// hooked remembers the clients that already carry the hook (go-redis cannot remove one).
var hooked sync.Map

// CountCost installs the counting hook on the clients that talk to the servers: the client
// itself when standalone (or Sentinel), each node's client for a Cluster or a Ring, since a
// cluster pipeline is one round trip per node.
func CountCost(rdb bucket.Client) {
	add := func(c *redis.Client) {
		if _, dup := hooked.LoadOrStore(c, struct{}{}); !dup {
			c.AddHook(costHook{})
		}
	}
	each := func(_ context.Context, c *redis.Client) error {
		add(c)
		return nil
	}
	switch c := rdb.(type) {
	case *redis.Client:
		add(c)
	case *redis.ClusterClient:
		c.OnNewNode(add)
		_ = c.ForEachShard(context.Background(), each)
	case *redis.Ring:
		c.OnNewNode(add)
		_ = c.ForEachShard(context.Background(), each)
	}
}
