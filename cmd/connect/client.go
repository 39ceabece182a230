package connect

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Server is the one server a command talks to (see Resolve): one of URL, Cluster or
// SentinelMaster names it. Passwords are unexported, so printing a Server never shows them.
type Server struct {
	Context            string // the context that named the server, if one did
	URL                string
	Cluster            []string
	SentinelMaster     string
	SentinelAddrs      []string
	SentinelUser       string
	sentinelPassword   string
	master             *dialedAddr // the master a Sentinel client dialled
	User               string
	password           string
	TLSCA              string
	TLSCert            string
	TLSKey             string
	InsecureSkipVerify bool
	InsecureSource     string // where InsecureSkipVerify came from, for the warning
	DialTimeout        time.Duration
	Timeout            time.Duration // each request, handshake included
	PoolSize           int
	BoundByContext     bool // every request also ends at its context's deadline
}

// Addr names where we connect, without credentials, for messages.
func (s *Server) Addr() string {
	if len(s.Cluster) > 0 || s.SentinelMaster != "" {
		return describeServer(s.Cluster, s.SentinelMaster, s.SentinelAddrs, "")
	}
	if u, err := parseURL(s.URL); err == nil {
		return u.opt.Addr
	}
	return RedactValue(s.URL)
}

func describeServer(cluster []string, master string, sentinels []string, url string) string {
	switch {
	case len(cluster) > 0:
		return "cluster " + RedactValue(strings.Join(cluster, ","))
	case master != "":
		return fmt.Sprintf("sentinel master %q via %s", master, RedactValue(strings.Join(sentinels, ",")))
	}
	return RedactValue(url)
}

// Label is the address and, when one named it, the context: what a view names.
func (s *Server) Label() string {
	if s.Context != "" {
		return s.Addr() + " (context " + format.SafeText(s.Context) + ")"
	}
	return s.Addr()
}

// InsecureWarning is the stderr line of a run that does not verify the server's TLS
// certificate; "" when it verifies.
func (s *Server) InsecureWarning() string {
	if !s.InsecureSkipVerify {
		return ""
	}
	return fmt.Sprintf("bucketctl: warning: the server's TLS certificate is not verified (%s): anyone on the path can pose as %s and read the traffic; give the CA with --tls-ca instead",
		format.SafeText(s.InsecureSource), format.SafeText(s.Addr()))
}

// NewClient builds the go-redis client (standalone, Cluster or Sentinel) with retries off,
// the hooks of hook, and no handshake round trips beyond HELLO ('bucketctl help design').
func (o *Server) NewClient() (bucket.Client, error) {
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	// Maintenance notifications cost a refused round trip per connection: off.
	noMaint := func() *maintnotifications.Config {
		return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	}
	uo := &redis.UniversalOptions{MasterName: o.SentinelMaster, Username: o.User, Password: o.password,
		SentinelUsername: o.SentinelUser, SentinelPassword: o.sentinelPassword,
		TLSConfig: tlsCfg, DialTimeout: o.DialTimeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
		Dialer: guardedDialer(o.DialTimeout, tlsCfg), ContextTimeoutEnabled: o.BoundByContext, PipelinePoolSize: -1,
		MaxRetries: -1, DialerRetries: 1, PoolSize: o.PoolSize, DisableIdentity: true, MaintNotificationsConfig: noMaint()}
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
	opt.MaxRetries, opt.DialerRetries = -1, 1 // one dial: go-redis would try 5 times, 100 ms apart
	if o.PoolSize > 0 {
		opt.PoolSize = o.PoolSize
	}
	opt.DisableIdentity, opt.MaintNotificationsConfig = true, noMaint()
	return o.NodeClient(opt), nil
}

// hook puts on c the hooks every client carries: ACL refusals named, Redis cost counted.
func (o *Server) hook(c *redis.Client) {
	c.AddHook(aclHook{user: cmp.Or(c.Options().Username, o.User, "default")})
	cost.Install(c)
}

// NodeClient builds a client for one node from opt (a NewClient client's options, changed),
// with the same hooks.
func (o *Server) NodeClient(opt *redis.Options) *redis.Client {
	c := redis.NewClient(opt)
	o.hook(c)
	return c
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

// plainTextPort explains a failed TLS connection whose port answers a plain-text PING
// with a RESP line (+PONG, -NOAUTH); nil otherwise.
func (o *Server) plainTextPort(err error) error {
	var rh tls.RecordHeaderError
	if !IsTimeout(err) && !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &rh) {
		return nil
	}
	if cfg, cerr := o.tlsConfig(); cerr != nil || cfg == nil || o.SentinelMaster != "" {
		return nil
	}
	addr := ""
	if len(o.Cluster) > 0 {
		addr = o.Cluster[0]
	} else if u, perr := parseURL(o.URL); perr == nil && u.opt.Network == "tcp" {
		addr = u.opt.Addr
	} else {
		return nil
	}
	timeout := o.DialTimeout
	if timeout <= 0 || timeout > time.Second {
		timeout = time.Second
	}
	conn, cerr := net.DialTimeout("tcp", addr, timeout)
	if cerr != nil {
		return nil
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	buf := make([]byte, 1)
	if _, werr := conn.Write([]byte("PING\r\n")); werr != nil {
		return nil
	}
	if n, _ := conn.Read(buf); n != 1 || buf[0] != '+' && buf[0] != '-' {
		return nil
	}
	return fmt.Errorf("TLS was asked for but %s speaks plain-text Redis (not TLS): use redis:// and no --tls-* flags, or the server's TLS port", addr)
}

// dialedAddr remembers the address its client dialled last: a Sentinel client's master.
type dialedAddr struct {
	passHook
	addr atomic.Pointer[string]
}

func (d *dialedAddr) get() string {
	if d != nil {
		if p := d.addr.Load(); p != nil {
			return *p
		}
	}
	return "?"
}

func (d *dialedAddr) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			a := conn.RemoteAddr().String()
			d.addr.Store(&a)
		}
		return conn, err
	}
}
