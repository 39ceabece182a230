package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Options configures Start.
type Options struct {
	// ForceInProcess uses miniredis even when redis-server is in PATH.
	ForceInProcess bool
	// RedisServer is the redis-server binary; "" looks it up in PATH.
	RedisServer string
	// ReadyTimeout bounds the wait for redis-server to answer PING;
	// default DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// StopGrace is how long Close waits after SIGTERM before SIGKILL.
const StopGrace = 2 * time.Second

// Sandbox is a running throwaway Redis. Close it when done.
type Sandbox struct {
	addr string
	kind string
	dir  string

	redis *Redis
	mini  *miniredis.Miniredis

	closeOnce sync.Once
	closeErr  error
}

// Start starts a throwaway Redis on 127.0.0.1. When redis-server is in PATH
// (or Options.RedisServer is set) and ForceInProcess is false, it runs
// redis-server with no persistence in a temporary directory and waits until
// it answers PING; a redis-server that fails to start is an error (with the
// tail of its output), not a silent fallback, so the caller can tell the user
// and retry with ForceInProcess. Otherwise it starts an in-process miniredis.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	bin := opts.RedisServer
	if bin == "" && !opts.ForceInProcess {
		bin, _ = RedisServerPath()
	}
	if opts.ForceInProcess || bin == "" {
		return startMiniredis()
	}
	return startRedisServer(ctx, bin, opts)
}

func startRedisServer(ctx context.Context, bin string, opts Options) (*Sandbox, error) {
	dir, err := os.MkdirTemp("", "bucketctl-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: temp dir: %w", err)
	}
	r, err := StartRedis(ctx, RedisConfig{
		Binary:       bin,
		Dir:          dir,
		LogPath:      filepath.Join(dir, "redis.log"),
		ReadyTimeout: opts.ReadyTimeout,
	})
	if err != nil {
		_ = removeAll(dir)
		return nil, err
	}
	kind := "redis-server"
	if v, err := RedisVersion(bin); err == nil {
		kind += " " + v
	}
	return &Sandbox{addr: r.Addr(), kind: kind, dir: dir, redis: r}, nil
}

func startMiniredis() (*Sandbox, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("sandbox: start miniredis: %w", err)
	}
	return &Sandbox{addr: m.Addr(), kind: "in-process (miniredis)", mini: m}, nil
}

// Addr returns "127.0.0.1:<port>".
func (s *Sandbox) Addr() string { return s.addr }

// URL returns "redis://127.0.0.1:<port>".
func (s *Sandbox) URL() string { return "redis://" + s.addr }

// Kind describes the server: "redis-server 7.0.15" or
// "in-process (miniredis)".
func (s *Sandbox) Kind() string { return s.kind }

// Close stops the server (SIGTERM, then SIGKILL after StopGrace) and removes
// its temporary directory. It is idempotent.
func (s *Sandbox) Close() error {
	s.closeOnce.Do(func() {
		if s.mini != nil {
			s.mini.Close()
			return
		}
		err := s.redis.Stop(StopGrace)
		if rmErr := removeAll(s.dir); err == nil && rmErr != nil {
			err = fmt.Errorf("sandbox: remove %s: %w", s.dir, rmErr)
		}
		s.closeErr = err
	})
	return s.closeErr
}
