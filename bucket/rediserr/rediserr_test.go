package rediserr_test

import (
	"context"
	"testing"
	"time"

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

// TestNotSent: a refused dial and a context ended before the command left are not sent; a
// command written to the server that got no reply in time may have run.
func TestNotSent(t *testing.T) {
	srv := redistest.Start(t)
	refused := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer refused.Close()
	if err := refused.Ping(context.Background()).Err(); err == nil || !rediserr.NotSent(err) {
		t.Fatalf("refused dial: NotSent(%v) = false, want true", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, ReadTimeout: 50 * time.Millisecond})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err == nil || !rediserr.NotSent(err) {
		t.Fatalf("context ended before sending: NotSent(%v) = false, want true", err)
	}
	// The server pauses every client for a second: the PING is written, the reply is late.
	if err := srv.Client(t).ClientPause(context.Background(), time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()).Err(); err == nil || rediserr.NotSent(err) {
		t.Fatalf("no reply in time after the command was written: NotSent(%v) = true, want false", err)
	}
}
