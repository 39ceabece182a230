package cost

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter counts the commands and round trips sent with a context carrying it (With). It is
// safe for concurrent use.
type Counter struct {
	commands, roundTrips atomic.Int64
}

// Commands and RoundTrips are the counts so far.
func (c *Counter) Commands() int   { return int(c.commands.Load()) }
func (c *Counter) RoundTrips() int { return int(c.roundTrips.Load()) }

type costKey struct{}

// With returns ctx carrying c besides the counters ctx carried already.
func With(ctx context.Context, c *Counter) context.Context {
	return context.WithValue(ctx, costKey{}, append(slices.Clip(costFrom(ctx)), c))
}

func costFrom(ctx context.Context) []*Counter {
	c, _ := ctx.Value(costKey{}).([]*Counter)
	return c
}

func add(counters []*Counter, commands int64) {
	if commands == 0 {
		return
	}
	for _, c := range counters {
		c.commands.Add(commands)
		c.roundTrips.Add(1)
	}
}

type costHook struct{} // feeds the counters of the context

func (costHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// handshake reports a command go-redis sends to set up a connection (Name is lower case).
func handshake(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "hello", "auth", "client", "select", "readonly":
		return true
	}
	return false
}

func (costHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cs := costFrom(ctx); cs != nil && !handshake(cmd) {
			add(cs, 1)
		}
		return next(ctx, cmd)
	}
}

func (costHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cs := costFrom(ctx); cs != nil {
			n := int64(0)
			for _, cmd := range cmds {
				if !handshake(cmd) {
					n++
				}
			}
			add(cs, n)
		}
		return next(ctx, cmds)
	}
}

var hooked sync.Map // the clients that carry the hook, or whose nodes will

// Install puts the counting hook on the client, or on each node's of a Cluster or a Ring;
// installing it again changes nothing.
func Install(rdb redis.UniversalClient) {
	if _, dup := hooked.LoadOrStore(rdb, struct{}{}); dup {
		return
	}
	put := func(c *redis.Client) {
		if _, dup := hooked.LoadOrStore(c, struct{}{}); !dup {
			c.AddHook(costHook{})
		}
	}
	switch c := rdb.(type) {
	case *redis.Client:
		c.AddHook(costHook{})
	case interface {
		OnNewNode(func(*redis.Client))
		ForEachShard(context.Context, func(context.Context, *redis.Client) error) error
	}: // a Cluster or a Ring
		c.OnNewNode(put)
		_ = c.ForEachShard(context.Background(), func(_ context.Context, n *redis.Client) error { put(n); return nil })
	}
}
