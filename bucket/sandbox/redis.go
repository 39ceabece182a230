package sandbox

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultReadyTimeout bounds how long StartRedis waits for PING to answer.
const DefaultReadyTimeout = 5 * time.Second

// LogTailLines is how many log lines error messages quote.
const LogTailLines = 20

// RedisServerPath returns the path of redis-server in PATH.
func RedisServerPath() (string, error) {
	return exec.LookPath("redis-server")
}

// RedisVersion returns the version a redis-server binary reports with
// --version ("7.0.15"), or an error.
func RedisVersion(binary string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("sandbox: %s --version: %w", binary, err)
	}
	// "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=..."
	for _, field := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(field, "v="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("sandbox: no version in %q", strings.TrimSpace(string(out)))
}

// RedisConfig describes one redis-server process for StartRedis.
type RedisConfig struct {
	// Binary is the redis-server to run; "" looks it up in PATH.
	Binary string
	// Dir is the working directory and --dir of the server. Required.
	Dir string
	// ConfigFile, when set, is passed as the first argument. Sentinel mode
	// needs one, writable, since Sentinel rewrites it.
	ConfigFile string
	// Sentinel adds --sentinel.
	Sentinel bool
	// Port to listen on; 0 picks a free one, and picks again when another
	// process takes it before the server binds it.
	Port int
	// ClusterBus also gives the server a cluster bus port (--cluster-port),
	// BusPort or a free one. Only for --cluster-enabled servers.
	ClusterBus bool
	BusPort    int
	// TLS, when set, makes the server listen with TLS only (--tls-port Port
	// --port 0; the certificate arguments go in Args) and is the client
	// configuration the readiness probe dials with.
	TLS *tls.Config
	// Username and Password authenticate the readiness probe (requirepass or
	// an ACL user); empty means no AUTH.
	Username, Password string
	// Args come after the standard arguments and so can override them.
	Args []string
	// LogPath receives stdout and stderr; default <Dir>/redis-<port>.log.
	LogPath string
	// ReadyTimeout bounds the wait for PING; default DefaultReadyTimeout.
	ReadyTimeout time.Duration
}

// Redis is a running redis-server process started by StartRedis.
type Redis struct {
	*Process
	// Port is the client port (TLS when the config had TLS).
	Port int
	// BusPort is the cluster bus port, 0 unless the config asked for one.
	BusPort int
	// Config is the configuration the server was started with, ports filled
	// in: StartRedis(ctx, r.Config) starts it again on the same ports.
	Config RedisConfig
}

// Addr returns "127.0.0.1:<port>".
func (r *Redis) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)) }

// StartRedis starts redis-server on 127.0.0.1 with no persistence (--save ""
// --appendonly no), protected mode on, in the foreground, and waits until it
// answers PING. A port taken between choosing and binding it is chosen again
// (up to 5 times); a fixed port that is busy is retried for a moment. When
// the server dies or does not answer in time, the error carries the tail of
// its log and the process is killed.
func StartRedis(ctx context.Context, cfg RedisConfig) (*Redis, error) {
	if cfg.Dir == "" {
		return nil, errors.New("sandbox: RedisConfig.Dir is required")
	}
	if cfg.Binary == "" {
		bin, err := RedisServerPath()
		if err != nil {
			return nil, fmt.Errorf("sandbox: redis-server not found in PATH: %w", err)
		}
		cfg.Binary = bin
	}
	const attempts = 5
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			// A fixed port may be held a moment longer by whoever has it.
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("sandbox: start redis-server: %w (last attempt: %v)", ctx.Err(), lastErr)
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			}
		}
		r, err := startRedisOnce(ctx, cfg)
		if err == nil {
			return r, nil
		}
		lastErr = err
		if !errors.Is(err, errAddrInUse) {
			return nil, err
		}
	}
	return nil, lastErr
}

var errAddrInUse = errors.New("address already in use")

func startRedisOnce(ctx context.Context, cfg RedisConfig) (*Redis, error) {
	var err error
	if cfg.Port == 0 {
		if cfg.Port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	if cfg.ClusterBus && cfg.BusPort == 0 {
		if cfg.BusPort, err = FreePort(); err != nil {
			return nil, err
		}
	}
	var args []string
	if cfg.ConfigFile != "" {
		args = append(args, cfg.ConfigFile)
	}
	if cfg.Sentinel {
		args = append(args, "--sentinel")
	}
	args = append(args,
		"--bind", "127.0.0.1",
		"--protected-mode", "yes",
		"--daemonize", "no",
		"--dir", cfg.Dir,
	)
	if !cfg.Sentinel {
		// Sentinel keeps its state in its config file only.
		args = append(args, "--save", "", "--appendonly", "no")
	}
	if cfg.TLS != nil {
		args = append(args, "--port", "0", "--tls-port", strconv.Itoa(cfg.Port))
	} else {
		args = append(args, "--port", strconv.Itoa(cfg.Port))
	}
	if cfg.ClusterBus {
		args = append(args, "--cluster-port", strconv.Itoa(cfg.BusPort))
	}
	args = append(args, cfg.Args...)

	logPath := cfg.LogPath
	if logPath == "" {
		logPath = filepath.Join(cfg.Dir, fmt.Sprintf("redis-%d.log", cfg.Port))
	}
	p, err := StartProcess(cfg.Binary, args, ProcessOptions{Dir: cfg.Dir, LogPath: logPath})
	if err != nil {
		return nil, err
	}
	// cfg is a copy: the caller's zero ports stay zero, so a retry picks
	// anew, while r.Config records the ports used.
	r := &Redis{Process: p, Port: cfg.Port, BusPort: cfg.BusPort, Config: cfg}
	timeout := cfg.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	if err := waitReady(ctx, p, r.Addr(), cfg.TLS, cfg.Username, cfg.Password, timeout); err != nil {
		_ = p.Kill()
		tail := p.LogTail(LogTailLines)
		if errors.Is(err, errAddrInUse) || strings.Contains(tail, "Address already in use") {
			return nil, fmt.Errorf("sandbox: redis-server on port %d: %w\n%s", cfg.Port, errAddrInUse, tail)
		}
		return nil, fmt.Errorf("sandbox: redis-server (args %q): %w", redactArgs(args), err)
	}
	return r, nil
}

// redactArgs hides the values of password arguments in error messages.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		switch out[i] {
		case "--requirepass", "--masterauth":
			out[i+1] = "(redacted)"
		}
	}
	return out
}

// waitReady polls addr with PING (after AUTH when password is set, over TLS
// when tlsConfig is set) until it answers PONG, p exits, ctx ends or timeout
// passes. The error names the last probe failure and, when p died, carries
// the tail of its log.
func waitReady(ctx context.Context, p *Process, addr string, tlsConfig *tls.Config, username, password string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if p != nil {
		// A probe blocked on a port someone else holds ends when p dies.
		probeCtx, cancelProbe := context.WithCancel(ctx)
		defer cancelProbe()
		go func() {
			select {
			case <-p.done:
				cancelProbe()
			case <-probeCtx.Done():
			}
		}()
		ctx = probeCtx
	}
	var last error
	for {
		if p != nil && p.Exited() {
			return fmt.Errorf("exited before answering PING (%v); log %s:\n%s", p.ExitErr(), p.LogPath(), p.LogTail(LogTailLines))
		}
		var pid int
		pid, last = probe(ctx, addr, tlsConfig, username, password)
		if last == nil {
			if p == nil || pid == p.Pid() {
				return nil
			}
			// Someone else's server holds the port; ours will fail to bind.
			return fmt.Errorf("%w: %s is served by pid %d, not by pid %d", errAddrInUse, addr, pid, p.Pid())
		}
		select {
		case <-ctx.Done():
			if p != nil && p.Exited() {
				continue // report the exit and the log
			}
			msg := fmt.Sprintf("no PONG from %s within %v: %v (last error: %v)", addr, timeout, ctx.Err(), last)
			if p != nil {
				msg += fmt.Sprintf("; log %s:\n%s", p.LogPath(), p.LogTail(LogTailLines))
			}
			return errors.New(msg)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ping dials addr once, authenticates when password is set, sends PING and
// expects PONG. It speaks RESP directly so that it has no pool or retry
// state between attempts.
func Ping(ctx context.Context, addr string, tlsConfig *tls.Config, username, password string) error {
	_, err := probe(ctx, addr, tlsConfig, username, password)
	return err
}

// probe is Ping that also returns the process_id from INFO server, so a
// caller can tell its own server from another one that holds the port.
func probe(ctx context.Context, addr string, tlsConfig *tls.Config, username, password string) (int, error) {
	dialer := &net.Dialer{Timeout: time.Second}
	var (
		conn net.Conn
		err  error
	)
	if tlsConfig != nil {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	deadline := time.Now().Add(time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	rd := bufio.NewReader(conn)
	if password != "" {
		auth := []string{"AUTH", password}
		if username != "" {
			auth = []string{"AUTH", username, password}
		}
		if err := roundTrip(conn, rd, auth, "+OK"); err != nil {
			return 0, err
		}
	}
	if err := roundTrip(conn, rd, []string{"PING"}, "+PONG"); err != nil {
		return 0, err
	}
	info, err := bulkRoundTrip(conn, rd, []string{"INFO", "server"})
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO server: no process_id")
}

func writeCommand(conn net.Conn, args []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := conn.Write([]byte(b.String()))
	return err
}

// bulkRoundTrip sends args and reads a bulk string reply.
func bulkRoundTrip(conn net.Conn, rd *bufio.Reader, args []string) (string, error) {
	if err := writeCommand(conn, args); err != nil {
		return "", err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	n, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
	if !strings.HasPrefix(line, "$") || err != nil || n < 0 {
		return "", fmt.Errorf("%s: got %q", args[0], line)
	}
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(rd, buf); err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func roundTrip(conn net.Conn, rd *bufio.Reader, args []string, want string) error {
	if err := writeCommand(conn, args); err != nil {
		return err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimRight(line, "\r\n")
	if line != want {
		return fmt.Errorf("%s: got %q", args[0], line)
	}
	return nil
}

// removeAll removes dir, retrying briefly: a server that just exited may
// still be closing files in it on some systems.
func removeAll(dir string) error {
	var err error
	for range 5 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}
