package redistest

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter is a go-redis hook that counts what a client sends: Commands (each command of a
// pipeline counts) and RoundTrips (a single command or a whole pipeline is one). Add it with
// client.AddHook(c).
type Counter struct{ Commands, RoundTrips atomic.Int64 }

// DialHook passes dials through.
func (c *Counter) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook counts one command, one round trip.
func (c *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.Commands.Add(1)
		c.RoundTrips.Add(1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook counts the pipeline's commands and one round trip.
func (c *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.Commands.Add(int64(len(cmds)))
		c.RoundTrips.Add(1)
		return next(ctx, cmds)
	}
}
