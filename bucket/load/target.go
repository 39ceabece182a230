package load

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// Exists reports which of keys exist, in one round trip per key's node.
func Exists(ctx context.Context, rdb bucket.Client, keys ...string) ([]string, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Exists(ctx, k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var found []string
	for i, c := range cmds {
		if c.Val() > 0 {
			found = append(found, keys[i])
		}
	}
	return found, nil
}
