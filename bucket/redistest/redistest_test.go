package redistest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/sandbox"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStandalone(t *testing.T) {
	t.Parallel()
	s := Start(t)
	ctx := ctxT(t)
	c := s.Client(t)

	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.URL() != "redis://"+s.Addr() {
		t.Errorf("Addr() = %q, URL() = %q", s.Addr(), s.URL())
	}
	cfg, err := c.ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["save"] != "" || cfg["appendonly"] != "no" || cfg["bind"] != "127.0.0.1" {
		t.Errorf("save=%q appendonly=%q bind=%q", cfg["save"], cfg["appendonly"], cfg["bind"])
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	s.Stop()
	s.Stop() // idempotent
	if err := sandbox.Ping(ctx, s.Addr(), nil, "", ""); err == nil {
		t.Fatal("PING answered after Stop")
	}
}

func TestRestartLosesScripts(t *testing.T) {
	t.Parallel()
	s := Start(t)
	ctx := ctxT(t)
	c := s.Client(t)
	port := s.Port()

	sha, err := c.ScriptLoad(ctx, "return 1").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.ScriptExists(ctx, sha).Result(); err != nil || !got[0] {
		t.Fatalf("SCRIPT EXISTS before restart = %v, %v", got, err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}

	s.Restart(t)
	if s.Port() != port {
		t.Fatalf("restarted on port %d, want %d", s.Port(), port)
	}
	// The same client reconnects; the server has neither the script nor the data.
	if got, err := c.ScriptExists(ctx, sha).Result(); err != nil || got[0] {
		t.Fatalf("SCRIPT EXISTS after restart = %v, %v; want [false]", got, err)
	}
	if err := c.EvalSha(ctx, sha, nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA after restart: %v, want NOSCRIPT", err)
	}
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET k after restart: %v, want redis.Nil", err)
	}
}

func TestKillIsACrash(t *testing.T) {
	t.Parallel()
	s := Start(t)
	ctx := ctxT(t)
	c := s.Client(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := sandbox.Ping(ctx, s.Addr(), nil, "", ""); err == nil {
		t.Fatal("PING answered after Kill")
	}
	s.Restart(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Restart of a killed server: %v", err)
	}
}

func TestPassword(t *testing.T) {
	t.Parallel()
	s := Start(t, WithPassword("s3cret"))
	ctx := ctxT(t)

	if err := s.Client(t).Ping(ctx).Err(); err != nil {
		t.Fatalf("client with the password: %v", err)
	}
	anon := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer anon.Close()
	if err := anon.Set(ctx, "k", "v", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("SET without password: %v, want NOAUTH", err)
	}
}

func TestACL(t *testing.T) {
	t.Parallel()
	s := Start(t, WithACL("alice on >alicepw ~cache:* +get +set", "bob off >bobpw +@all ~*"))
	ctx := ctxT(t)

	opt := s.Options()
	opt.Username, opt.Password = "alice", "alicepw"
	alice := redis.NewClient(opt)
	defer alice.Close()
	if err := alice.Set(ctx, "cache:a", "1", 0).Err(); err != nil {
		t.Fatalf("alice SET cache:a: %v", err)
	}
	if got, err := alice.Get(ctx, "cache:a").Result(); err != nil || got != "1" {
		t.Fatalf("alice GET cache:a = %q, %v", got, err)
	}
	if err := alice.Set(ctx, "other:a", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("alice SET other:a: %v, want NOPERM (key pattern)", err)
	}
	if err := alice.Del(ctx, "cache:a").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("alice DEL cache:a: %v, want NOPERM (command)", err)
	}

	opt = s.Options()
	opt.Username, opt.Password = "bob", "bobpw"
	bob := redis.NewClient(opt)
	defer bob.Close()
	if err := bob.Ping(ctx).Err(); err == nil {
		t.Errorf("disabled user bob authenticated")
	}

	// The rules come back after a restart.
	s.Restart(t)
	if err := alice.Del(ctx, "cache:a").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("after restart, alice DEL cache:a: %v, want NOPERM", err)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	s := Start(t, WithTLS())
	ctx := ctxT(t)

	if !strings.HasPrefix(s.URL(), "rediss://127.0.0.1:") {
		t.Errorf("URL() = %q", s.URL())
	}
	if err := s.Client(t).Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("TLS client: %v", err)
	}

	// A client that only trusts the CA file (no client certificate) connects.
	caFile, certFile, keyFile := s.TLSFiles()
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("no certificate in %s", caFile)
	}
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	opt.TLSConfig.RootCAs = pool
	withCA := redis.NewClient(opt)
	defer withCA.Close()
	if got, err := withCA.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("client with the CA file: %q, %v", got, err)
	}
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		t.Errorf("client certificate files: %v", err)
	}

	// A plain-text client is refused.
	plain := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Error("plain-text client got an answer from the TLS port")
	}
	// So is a TLS client that does not trust the CA.
	untrusting := redis.NewClient(&redis.Options{Addr: s.Addr(), TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}, MaxRetries: -1})
	defer untrusting.Close()
	if err := untrusting.Ping(ctx).Err(); err == nil {
		t.Error("TLS client without the CA connected")
	}
}

func TestReplica(t *testing.T) {
	t.Parallel()
	m := Start(t, WithPassword("pw"), WithTLS())
	r := Start(t, WithReplicaOf(m), WithTLS())
	ctx := ctxT(t)

	if err := m.Client(t).Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rc := r.Client(t)
	WaitFor(t, 10*time.Second, "the replica to hold k = v", func() bool {
		got, err := rc.Get(ctx, "k").Result()
		return err == nil && got == "v"
	})
	if err := rc.Set(ctx, "k", "w", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Errorf("SET on the replica: %v, want READONLY", err)
	}
}

func TestWithArgs(t *testing.T) {
	t.Parallel()
	s := Start(t, WithArgs("--maxmemory", "10mb", "--repl-diskless-sync-delay", "1"))
	ctx := ctxT(t)
	cfg, err := s.Client(t).ConfigGet(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["maxmemory"] != "10485760" || cfg["repl-diskless-sync-delay"] != "1" {
		t.Errorf("maxmemory=%q repl-diskless-sync-delay=%q", cfg["maxmemory"], cfg["repl-diskless-sync-delay"])
	}
}

// fatalRecorder stands in for a test, recording how it ended: the message
// of a Fatalf, or "skipped" (which the harness must never do).
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalRecorder) Skip(...any)          { f.SkipNow() }
func (f *fatalRecorder) Skipf(string, ...any) { f.SkipNow() }
func (f *fatalRecorder) SkipNow()             { f.msg = "skipped"; runtime.Goexit() }

func TestMissingRedisServerFailsClearly(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(rec)
	}()
	<-done
	if rec.msg != missingRedisServer || !strings.Contains(rec.msg, "apt-get install -y redis-server") {
		t.Errorf("Start without redis-server failed with %q", rec.msg)
	}
}
