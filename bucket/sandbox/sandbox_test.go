package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func requireRedisServer(t *testing.T) string {
	t.Helper()
	bin, err := RedisServerPath()
	if err != nil {
		t.Fatalf("redis-server not found in PATH: run `make test` (it installs it) or `apt-get install -y redis-server`")
	}
	return bin
}

func TestStartRedisServer(t *testing.T) {
	requireRedisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	sb, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })

	if !strings.HasPrefix(sb.Kind(), "redis-server ") || len(sb.Kind()) <= len("redis-server ") {
		t.Errorf("Kind() = %q, want \"redis-server <version>\"", sb.Kind())
	}
	host, port, err := net.SplitHostPort(sb.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr() = %q, want 127.0.0.1:<port>", sb.Addr())
	}
	if sb.URL() != "redis://"+sb.Addr() {
		t.Errorf("URL() = %q", sb.URL())
	}

	opt, err := redis.ParseURL(sb.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET k = %q, %v", got, err)
	}
	// No persistence: nothing the demo writes survives or touches the disk.
	cfg, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["save"] != "" || cfg["appendonly"] != "no" || cfg["protected-mode"] != "yes" || cfg["bind"] != "127.0.0.1" {
		t.Errorf("config save=%q appendonly=%q protected-mode=%q bind=%q", cfg["save"], cfg["appendonly"], cfg["protected-mode"], cfg["bind"])
	}
	dir := cfg["dir"]
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("server dir %q: %v", dir, err)
	}

	if err := sb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := Ping(ctx, sb.Addr(), nil, "", ""); err == nil {
		t.Errorf("server still answers after Close")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %q still there after Close (stat: %v)", dir, err)
	}
}

func TestStartInProcess(t *testing.T) {
	ctx := context.Background()
	sb, err := Start(ctx, Options{ForceInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Kind() != "in-process (miniredis)" {
		t.Errorf("Kind() = %q", sb.Kind())
	}
	if !strings.HasPrefix(sb.Addr(), "127.0.0.1:") || sb.URL() != "redis://"+sb.Addr() {
		t.Errorf("Addr() = %q, URL() = %q", sb.Addr(), sb.URL())
	}
	c := redis.NewClient(&redis.Options{Addr: sb.Addr()})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sb.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := Ping(ctx, sb.Addr(), nil, "", ""); err == nil {
		t.Errorf("miniredis still answers after Close")
	}
}

func TestStartFallsBackWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	sb, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.Kind() != "in-process (miniredis)" {
		t.Errorf("Kind() = %q, want the in-process fallback", sb.Kind())
	}
}

func TestStartRedisReportsLogTailWhenServerDies(t *testing.T) {
	requireRedisServer(t)
	_, err := StartRedis(context.Background(), RedisConfig{
		Dir:  t.TempDir(),
		Args: []string{"--no-such-directive", "1"},
	})
	if err == nil {
		t.Fatal("StartRedis with a bad directive succeeded")
	}
	if !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("error does not quote the server's output:\n%v", err)
	}
}

func TestStartRedisBusyFixedPort(t *testing.T) {
	requireRedisServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	start := time.Now()
	_, err = StartRedis(context.Background(), RedisConfig{Dir: t.TempDir(), Port: port})
	if err == nil {
		t.Fatal("StartRedis on a busy port succeeded")
	}
	if !errors.Is(err, errAddrInUse) || !strings.Contains(err.Error(), strconv.Itoa(port)) {
		t.Errorf("error = %v, want address in use on port %d", err, port)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("gave up after %v, want a bounded retry", d)
	}
}

func TestStartRedisAgainFromConfig(t *testing.T) {
	requireRedisServer(t)
	r, err := StartRedis(context.Background(), RedisConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop(StopGrace)
	if r.Port == 0 || r.Config.Port != r.Port {
		t.Errorf("Port = %d, Config.Port = %d", r.Port, r.Config.Port)
	}
	// Starting again from r.Config reuses the port once it is free.
	if err := r.Stop(StopGrace); err != nil {
		t.Fatal(err)
	}
	r2, err := StartRedis(context.Background(), r.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Stop(StopGrace)
	if r2.Port != r.Port {
		t.Errorf("restart on port %d, want %d", r2.Port, r.Port)
	}
}

func TestFreePortDoesNotRepeat(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("FreePort returned %d twice", p)
		}
		seen[p] = true
	}
}

func TestProcessStopEscalatesToKill(t *testing.T) {
	dir := t.TempDir()
	// The ignored SIGTERM survives exec, so sleep ignores it too.
	p, err := StartProcess("/bin/sh", []string{"-c", `trap "" TERM; echo started; exec sleep 30`}, ProcessOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.LogTail(5), "started") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := p.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() {
		t.Fatal("process still running after Stop")
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("Stop took %v, want about the grace period", d)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill after Stop: %v", err)
	}
	if got := p.LogTail(1); got != "started" {
		t.Errorf("LogTail(1) = %q", got)
	}
	if filepath.Dir(p.LogPath()) != dir {
		t.Errorf("LogPath() = %q, want it in %q", p.LogPath(), dir)
	}
}
