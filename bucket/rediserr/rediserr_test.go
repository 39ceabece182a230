package rediserr_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestIsUnreachable: what the CLI (exit 3) and the live views ("Redis unreachable") call
// unreachable, on real failures: a refused dial, a refused password, a killed server;
// and an error reply is not.
func TestIsUnreachable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.WithPassword("right"))
	for name, opt := range map[string]*redis.Options{
		"refused dial":   {Addr: "127.0.0.1:1", MaxRetries: -1},
		"wrong password": {Addr: srv.Addr(), Password: "wrong", MaxRetries: -1},
	} {
		c := redis.NewClient(opt)
		err := c.Ping(ctx).Err()
		c.Close()
		if !rediserr.IsUnreachable(err) {
			t.Errorf("%s: %v is not unreachable", name, err)
		}
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "right", MaxRetries: -1})
	defer c.Close()
	if err := c.Do(ctx, "nosuchcommand").Err(); err == nil || rediserr.IsUnreachable(err) {
		t.Errorf("an error reply (%v) counts as unreachable", err)
	}
	if rediserr.IsUnreachable(nil) {
		t.Error("no error counts as unreachable")
	}
	srv.Kill()
	if err := c.Ping(ctx).Err(); !rediserr.IsUnreachable(err) {
		t.Errorf("a killed server: %v is not unreachable", err)
	}
}
