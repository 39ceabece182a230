package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/bucketctl/bucketctl/bucket/sandbox"
)

// Time bounds. They are generous because tests share two cores with other
// test binaries; every wait polls and returns as soon as it can.
const (
	readyTimeout   = 10 * time.Second // a process answers PING
	replTimeout    = 15 * time.Second // a replica is in sync
	clusterTimeout = 20 * time.Second // a new cluster is ok everywhere
	failoverWait   = 25 * time.Second // a failover has completed
	stopGrace      = 2 * time.Second  // SIGTERM to SIGKILL
	pollEvery      = 50 * time.Millisecond
	commandTimeout = 2 * time.Second // one admin command
	logTailLines   = 15
)

// missingRedisServer is the message of the failure when redis-server is not
// installed.
const missingRedisServer = "redis-server not found in PATH: run `make test` (it installs it) or `apt-get install -y redis-server`"

// requireRedisServer returns the path of redis-server or fails the test.
func requireRedisServer(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("%s", missingRedisServer)
	}
	return bin
}

// baseArgs are the arguments every data node gets on top of the sandbox's.
func baseArgs() []string {
	return []string{
		"--repl-diskless-sync-delay", "0",
		"--enable-debug-command", "local",
		"--shutdown-timeout", "0",
	}
}

// Option configures Start.
type Option func(*options)

type options struct {
	password  string
	acl       []string
	tls       bool
	args      []string
	replicaOf *Server
}

// WithPassword sets requirepass: the default user needs password p.
// Server.Client and Server.Options authenticate with it.
func WithPassword(p string) Option { return func(o *options) { o.password = p } }

// WithACL applies ACL rules after the server starts (and after each
// Restart). Each line holds the arguments of one ACL SETUSER, separated by
// spaces: "alice on >secret ~cache:* +get +set".
func WithACL(lines ...string) Option {
	return func(o *options) { o.acl = append(o.acl, lines...) }
}

// WithTLS serves TLS only: a CA, a server certificate (for 127.0.0.1,
// ::1 and localhost) and a client certificate are generated into the test's
// temp dir, and the server runs with --port 0 --tls-port N and
// --tls-auth-clients optional. Server.Client trusts the CA; see TLSFiles.
func WithTLS() Option { return func(o *options) { o.tls = true } }

// WithArgs appends redis-server arguments ("--maxmemory", "10mb"); they come
// last, so they override the harness's defaults.
func WithArgs(args ...string) Option {
	return func(o *options) { o.args = append(o.args, args...) }
}

// WithReplicaOf makes the server a replica of m (with masterauth when m has
// a password; a replica of a TLS server must use WithTLS too). Start returns
// once the replica is in sync.
func WithReplicaOf(m *Server) Option { return func(o *options) { o.replicaOf = m } }

// Server is a standalone redis-server.
type Server struct {
	tb   testing.TB
	opts options
	tls  *tlsBundle

	mu sync.Mutex
	r  *sandbox.Redis
}

// Start starts a standalone redis-server on a free loopback port and stops
// it in t.Cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := requireRedisServer(t)
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dir := t.TempDir()
	s := &Server{tb: t, opts: o}
	cfg := sandbox.RedisConfig{
		Binary:       bin,
		Dir:          dir,
		LogPath:      filepath.Join(dir, "redis.log"),
		Password:     o.password,
		ReadyTimeout: readyTimeout,
	}
	args := baseArgs()
	if o.tls {
		b, err := newTLSBundle(dir)
		if err != nil {
			t.Fatalf("redistest: TLS certificates: %v", err)
		}
		s.tls = b
		cfg.TLS = b.clientConfig()
		args = append(args,
			"--tls-cert-file", b.certFile,
			"--tls-key-file", b.keyFile,
			"--tls-ca-cert-file", b.caFile,
			"--tls-auth-clients", "optional",
		)
	}
	if o.password != "" {
		args = append(args, "--requirepass", o.password)
	}
	if m := o.replicaOf; m != nil {
		args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port()))
		if m.opts.password != "" {
			args = append(args, "--masterauth", m.opts.password)
		}
		if m.tls != nil {
			if !o.tls {
				t.Fatalf("redistest: a replica of a TLS server needs WithTLS too")
			}
			args = append(args, "--tls-replication", "yes")
		}
	}
	cfg.Args = append(args, o.args...)

	r, err := sandbox.StartRedis(context.Background(), cfg)
	if err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	s.r = r
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redistest: log of redis-server %s (%s):\n%s", s.Addr(), r.LogPath(), s.proc().LogTail(logTailLines))
		}
		s.Stop()
	})
	s.afterStart(t)
	return s
}

// afterStart applies the ACL rules and waits for a replica to sync.
func (s *Server) afterStart(t testing.TB) {
	t.Helper()
	if len(s.opts.acl) > 0 {
		c := redis.NewClient(s.adminOptions())
		defer c.Close()
		for _, line := range s.opts.acl {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				t.Fatalf("redistest: empty ACL line")
			}
			args := []any{"ACL", "SETUSER"}
			for _, f := range fields {
				args = append(args, f)
			}
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			err := c.Do(ctx, args...).Err()
			cancel()
			if err != nil {
				t.Fatalf("redistest: ACL SETUSER %s: %v", line, err)
			}
		}
	}
	if s.opts.replicaOf != nil {
		waitReplicaInSync(t, s.adminOptions(), s.opts.replicaOf.Addr(), s.proc(), s.opts.replicaOf.proc())
	}
}

func (s *Server) proc() *sandbox.Redis {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r
}

// Port returns the server's port (its TLS port under WithTLS).
func (s *Server) Port() int { return s.proc().Port }

// Addr returns "127.0.0.1:<port>".
func (s *Server) Addr() string { return s.proc().Addr() }

// URL returns "redis://127.0.0.1:<port>", or "rediss://..." under WithTLS.
// It carries no credentials; a client of a TLS server also needs the CA
// (TLSFiles), since redis.ParseURL only sets the server name.
func (s *Server) URL() string {
	if s.tls != nil {
		return "rediss://" + s.Addr()
	}
	return "redis://" + s.Addr()
}

// Options returns a fresh copy of go-redis options for this server: its
// address, the default user's password, and under WithTLS a TLS
// configuration that trusts the generated CA and presents the client
// certificate. Set Username/Password to connect as an ACL user.
func (s *Server) Options() *redis.Options {
	o := &redis.Options{Addr: s.Addr(), Password: s.opts.password, MaintNotificationsConfig: noMaintNotifications()}
	if s.tls != nil {
		o.TLSConfig = s.tls.clientConfig()
	}
	return o
}

// noMaintNotifications turns off go-redis's maintenance-notification handshake, as the
// product's clients do (cmd/connect): in its auto mode a refused handshake rewrites the
// client's options while another goroutine may be copying them (a data race).
func noMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

// adminOptions are Options for the harness's own short-lived clients.
func (s *Server) adminOptions() *redis.Options {
	o := s.Options()
	o.DialTimeout = commandTimeout
	o.ReadTimeout = commandTimeout
	o.WriteTimeout = commandTimeout
	o.PoolSize = 2
	return o
}

// Client returns a client for this server (see Options), closed in
// t.Cleanup. It reconnects by itself after Restart.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(s.Options())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TLSFiles returns the paths of the CA certificate, the client certificate
// and the client key (PEM) under WithTLS, and empty strings otherwise.
func (s *Server) TLSFiles() (caCert, clientCert, clientKey string) {
	if s.tls == nil {
		return "", "", ""
	}
	return s.tls.caFile, s.tls.clientCertFile, s.tls.clientKeyFile
}

// Stop stops the server: SIGTERM, then SIGKILL after 2 s. It is idempotent.
func (s *Server) Stop() {
	if err := s.proc().Stop(stopGrace); err != nil {
		s.tb.Errorf("redistest: stop %s: %v", s.Addr(), err)
	}
}

// Kill stops the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	if err := s.proc().Kill(); err != nil {
		s.tb.Errorf("redistest: kill %s: %v", s.Addr(), err)
	}
}

// Restart stops the server (if it runs) and starts it again on the same
// port with the same arguments, then applies the ACL rules again. There is
// no persistence, so data and loaded scripts are gone: after a Restart,
// EVALSHA answers NOSCRIPT. Clients from Client reconnect by themselves.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	old := s.r
	s.mu.Unlock()
	if err := old.Stop(stopGrace); err != nil {
		t.Fatalf("redistest: restart %s: stop: %v", old.Addr(), err)
	}
	r, err := sandbox.StartRedis(context.Background(), old.Config)
	if err != nil {
		t.Fatalf("redistest: restart %s: %v", old.Addr(), err)
	}
	s.mu.Lock()
	s.r = r
	s.mu.Unlock()
	s.afterStart(t)
}

// waitReplicaInSync waits until the replica at opt reports a live link to
// masterAddr and no sync in progress.
func waitReplicaInSync(t testing.TB, opt *redis.Options, masterAddr string, procs ...*sandbox.Redis) {
	t.Helper()
	c := redis.NewClient(opt)
	defer c.Close()
	_, port, _ := strings.Cut(masterAddr, ":")
	ok, status := poll(replTimeout, func(ctx context.Context) (bool, string) {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			return false, err.Error()
		}
		f := infoFields(info)
		done := f["role"] == "slave" && f["master_port"] == port &&
			f["master_link_status"] == "up" && f["master_sync_in_progress"] == "0"
		return done, fmt.Sprintf("role=%s master=%s:%s link=%s sync_in_progress=%s",
			f["role"], f["master_host"], f["master_port"], f["master_link_status"], f["master_sync_in_progress"])
	})
	if !ok {
		t.Fatalf("redistest: replica %s not in sync with %s within %v (%s)%s", opt.Addr, masterAddr, replTimeout, status, logTails(procs...))
	}
}

// poll calls check every pollEvery, each call with its own command timeout,
// until it reports done or timeout passes. It returns whether check
// succeeded and its last status.
func poll(timeout time.Duration, check func(ctx context.Context) (done bool, status string)) (bool, string) {
	deadline := time.Now().Add(timeout)
	var status string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		done, st := check(ctx)
		cancel()
		status = st
		if done {
			return true, status
		}
		if time.Now().After(deadline) {
			return false, status
		}
		time.Sleep(pollEvery)
	}
}

// infoFields parses INFO output into a map.
func infoFields(info string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// logTails formats the log tails of procs for a failure message.
func logTails(procs ...*sandbox.Redis) string {
	var b strings.Builder
	for _, p := range procs {
		if p == nil {
			continue
		}
		fmt.Fprintf(&b, "\n--- %s (%s):\n%s", p.Addr(), p.LogPath(), p.LogTail(logTailLines))
	}
	return b.String()
}
