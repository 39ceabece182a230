package bucket

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// MemoryUsage is MEMORY USAGE of every key in one round trip, in bytes (0: gone).
func (s *Store) MemoryUsage(ctx context.Context, keys []string) ([]int64, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.MemoryUsage(ctx, k)
	}
	_, err := pipe.Exec(ctx)
	if err != nil && !isPerCommand(err) {
		s.networkErr(err)
		return nil, fmt.Errorf("memory usage: %w", err)
	}
	out := make([]int64, len(keys))
	for i, c := range cmds {
		v, err := c.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("memory usage %s: %w", strconv.Quote(keys[i]), err)
		}
		out[i] = v
	}
	return out, nil
}

// IsCluster reports whether the Store talks to a Cluster (slots matter).
func (s *Store) IsCluster() bool { return s.isCluster() }
