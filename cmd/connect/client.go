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

// NewClient builds the go-redis client (standalone, Cluster or Sentinel) with retries off,
// the hooks of hook, and no handshake round trips beyond HELLO ('bucketctl help design').
func (o *Server) NewClient() (bucket.Client, error) {
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	uo := &redis.UniversalOptions{MasterName: o.SentinelMaster, Username: o.User, Password: o.password,
		SentinelUsername: o.SentinelUser, SentinelPassword: o.sentinelPassword,
		TLSConfig: tlsCfg, DialTimeout: o.DialTimeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
		Dialer: guardedDialer(o.DialTimeout, tlsCfg), ContextTimeoutEnabled: o.BoundByContext, PipelinePoolSize: -1,
		MaxRetries: -1, PoolSize: o.PoolSize, DisableIdentity: true, MaintNotificationsConfig: noMaintNotifications()}
	switch {
	case len(o.Cluster) > 0:
		uo.Addrs = o.Cluster
		c := redis.NewClusterClient(uo.Cluster())
		c.OnNewNode(o.hook) // node clients are made lazily: this covers them all
		return c, nil
	case o.SentinelMaster != "":
		uo.Addrs = o.SentinelAddrs
		c := redis.NewFailoverClient(uo.Failover())
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
	if o.PoolSize > 0 {
		opt.PoolSize = o.PoolSize
	}
	opt.DisableIdentity, opt.MaintNotificationsConfig = true, noMaintNotifications()
	c := redis.NewClient(opt)
	o.hook(c)
	return c, nil
}

// hook puts on c the hooks every client carries: ACL refusals named, Redis cost counted.
func (o *Server) hook(c *redis.Client) {
	user := c.Options().Username
	if user == "" {
		user = o.User
	}
	c.AddHook(aclHook{user: user})
	cost.Install(c)
}

// NodeClient builds a client for one node from opt (a NewClient client's options, changed),
// with the same hooks.
func (o *Server) NodeClient(opt *redis.Options) *redis.Client {
	c := redis.NewClient(opt)
	o.hook(c)
	return c
}

// noMaintNotifications turns off go-redis's maintenance notifications: a refused round
// trip on every connection, for a feature of long-lived pools.
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

// plainTextPort explains a failed TLS connection whose port answers a plain-text PING;
// nil otherwise.
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

// answersPlainRESP says addr answers a plain-text PING with a RESP line (+PONG, -NOAUTH).
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
