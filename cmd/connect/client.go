package connect

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
)

// NewClient builds the go-redis client: standalone (redis://, rediss://, unix://), Cluster
// or Sentinel. Retries are off (MaxRetries: -1): a decision re-sent after a dropped
// connection could be applied twice. A Cluster client still follows MOVED and ASK
// redirects (MaxRedirects, default 3), which prove the command did not run; its own
// re-sending after network errors is turned off per command by bucket.Store, which marks
// decisions NoRetry (see runOnce in bucket/store.go). Every client carries the same hooks
// (see hook): every server reply of NOPERM becomes a PermissionError naming the user, and
// Redis cost is counted.
//
// A connection costs one round trip (HELLO) before the first command: go-redis's CLIENT
// SETINFO (DisableIdentity), a round trip of its own that servers before 7.2 refuse, and
// its maintenance notifications (see noMaintNotifications) are turned off.
//
// Time limits: each request waits at most Timeout; with BoundByContext, less when its
// context's deadline is nearer (ContextTimeoutEnabled), so a command's one deadline also
// bounds the handshake and the client's own further attempts.
// Pipelines share the one pool (PipelinePoolSize -1): go-redis's separate pipeline pool
// made a pipelined read against a server that stopped answering wait twice.
func (o *Server) NewClient() (bucket.Client, error) {
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	pool := o.PoolSize
	switch {
	case len(o.Cluster) > 0:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: o.Cluster, Username: o.User, Password: o.password,
			TLSConfig: tlsCfg, DialTimeout: o.DialTimeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
			Dialer: guardedDialer(o.DialTimeout, tlsCfg), ContextTimeoutEnabled: o.BoundByContext, PipelinePoolSize: -1,
			MaxRetries: -1, PoolSize: pool, DisableIdentity: true, MaintNotificationsConfig: noMaintNotifications()})
		// Every command, pipeline and per-master call runs on a node's client, made
		// lazily, so registering here, before any is made, covers them all.
		c.OnNewNode(o.hook)
		return c, nil
	case o.SentinelMaster != "":
		c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: o.SentinelMaster, SentinelAddrs: o.SentinelAddrs,
			Username: o.User, Password: o.password, SentinelUsername: o.SentinelUser, SentinelPassword: o.sentinelPassword,
			TLSConfig: tlsCfg, DialTimeout: o.DialTimeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
			Dialer: guardedDialer(o.DialTimeout, tlsCfg), ContextTimeoutEnabled: o.BoundByContext, PipelinePoolSize: -1,
			MaxRetries: -1, PoolSize: pool, DisableIdentity: true})
		o.hook(c)
		o.master = &dialedAddr{}
		c.AddHook(o.master)
		return c, nil
	}
	u, err := parseURL(o.URL)
	if err != nil {
		return nil, Usagef("--url %s: %s (%s)", RedactValue(o.URL), err, urlHelp)
	}
	opt := u.opt
	if o.User != "" {
		opt.Username = o.User
	}
	if o.password != "" {
		opt.Password = o.password
	}
	if opt.TLSConfig != nil || tlsCfg != nil {
		if tlsCfg == nil {
			tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if opt.TLSConfig != nil {
			tlsCfg.ServerName = opt.TLSConfig.ServerName
		}
		opt.TLSConfig = tlsCfg
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = o.DialTimeout, o.Timeout, o.Timeout
	opt.Dialer = guardedDialer(o.DialTimeout, opt.TLSConfig)
	opt.ContextTimeoutEnabled, opt.PipelinePoolSize = o.BoundByContext, -1
	opt.MaxRetries = -1
	if pool > 0 {
		opt.PoolSize = pool
	}
	opt.DisableIdentity, opt.MaintNotificationsConfig = true, noMaintNotifications()
	c := redis.NewClient(opt)
	o.hook(c)
	return c, nil
}

// hook puts on c the hooks every client of a server carries: the ACL's refusals named
// (aclHook) and the counting of Redis cost (cost.Install). NewClient puts them on its
// client (on each node's client of a Cluster, as it is made), NodeClient on the others.
func (o *Server) hook(c *redis.Client) {
	// The user the client logs in as: a URL's own (redis://ro@host) when it names one.
	user := c.Options().Username
	if user == "" {
		user = o.User
	}
	c.AddHook(aclHook{user: user})
	cost.Install(c)
}

// NodeClient builds a client of its own for one node of the server from opt, a copy of the
// options of a client NewClient made (changed as the caller needs): it carries the same
// hooks. hot follows writes on such clients (hot.Options.NodeClient).
func (o *Server) NodeClient(opt *redis.Options) *redis.Client {
	c := redis.NewClient(opt)
	o.hook(c)
	return c
}

// noMaintNotifications turns off go-redis's maintenance notifications (RESP3 pushes that
// announce a server's planned move). By default every new client starts their workers and
// every new connection asks for them, a round trip an open-source server refuses: about
// 1 ms on each command's start-up, for a feature that serves long-lived application
// pools, not an operator's commands.
func noMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

func (o *Server) tlsConfig() (*tls.Config, error) {
	if o.TLSCA == "" && o.TLSCert == "" && !o.InsecureSkipVerify && !strings.HasPrefix(o.URL, "rediss://") {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in flag, labelled insecure
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, Usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, Usagef("--tls-ca %s: no PEM certificates in the file", o.TLSCA)
		}
		cfg.RootCAs = pool
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, Usagef("--tls-cert/--tls-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// plainTextPort explains a failed TLS connection whose port speaks plain Redis: a server
// without TLS does not answer a TLS hello (the client times out) or answers it in plain
// text. It returns nil when TLS is off or the port does not answer a plain PING.
func (o *Server) plainTextPort(err error) error {
	var rh tls.RecordHeaderError
	if !IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &rh) {
		return nil
	}
	if cfg, cerr := o.tlsConfig(); cerr != nil || cfg == nil {
		return nil
	}
	addr := ""
	switch {
	case len(o.Cluster) > 0:
		addr = o.Cluster[0]
	case o.SentinelMaster != "":
		return nil
	default:
		u, perr := parseURL(o.URL)
		if perr != nil || u.opt.Network != "tcp" {
			return nil
		}
		addr = u.opt.Addr
	}
	timeout := o.DialTimeout
	if timeout <= 0 || timeout > time.Second {
		timeout = time.Second
	}
	if !answersPlainRESP(addr, timeout) {
		return nil
	}
	return fmt.Errorf("TLS was asked for but %s speaks plain-text Redis (not TLS): use redis:// and no --tls-* flags, or the server's TLS port", addr)
}

// answersPlainRESP reports whether addr replies to a plain-text PING with a RESP line
// (+PONG, or an error such as -NOAUTH).
func answersPlainRESP(addr string, timeout time.Duration) bool {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 1)
	n, _ := conn.Read(buf)
	return n == 1 && (buf[0] == '+' || buf[0] == '-')
}
