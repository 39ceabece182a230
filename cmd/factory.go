package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/bucketctl/bucketctl/bucket"
)

// Factory holds a command's lazy dependencies: a command that fails flag parsing never
// reads the config or dials Redis.
type Factory struct {
	IO      *IOStreams
	V       *viper.Viper
	Version VersionInfo
	// Now is the local clock (tests pin it).
	Now func() time.Time
	// Flags are the root's persistent flags, to tell a flag given from its default.
	Flags *pflag.FlagSet

	mu     sync.Mutex
	cfg    *Config
	client bucket.Client
	conn   *ConnOptions
	store  *bucket.Store
}

// VersionInfo is stamped in at build time.
type VersionInfo struct{ Version, Commit, Date string }

// NewFactory returns a Factory over io with a fresh viper.
func NewFactory(io *IOStreams, version VersionInfo) *Factory {
	return &Factory{IO: io, V: viper.New(), Version: version, Now: time.Now, Flags: pflag.NewFlagSet("bucketctl", pflag.ContinueOnError)}
}

// Config reads the config file once.
func (f *Factory) Config() (*Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg != nil {
		return f.cfg, nil
	}
	cfg, err := loadConfig(f.V, f.V.GetString("config"))
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return cfg, nil
}

// ConnOptions is the resolved connection: flags win over env (BUCKETCTL_*), which win over
// the selected context, which wins over defaults.
type ConnOptions struct {
	Context        string
	URL            string
	Cluster        []string
	SentinelMaster string
	SentinelAddrs  []string
	// SentinelUser and its password (BUCKETCTL_SENTINEL_PASSWORD or the context's
	// sentinel-password-env) authenticate to the sentinels; by default none is sent, since
	// sentinels usually have no ACL users of the data nodes.
	SentinelUser     string
	sentinelPassword string
	// master records the address a Sentinel failover client dialled: the master in use.
	master             *dialedAddr
	User               string
	password           string
	TLSCA              string
	TLSCert            string
	TLSKey             string
	InsecureSkipVerify bool
	DialTimeout        time.Duration
	Timeout            time.Duration
	PoolSize           int
}

// Addr names where we connect, without credentials, for messages.
func (o *ConnOptions) Addr() string {
	switch {
	case len(o.Cluster) > 0:
		return "cluster " + strings.Join(o.Cluster, ",")
	case o.SentinelMaster != "":
		return fmt.Sprintf("sentinel master %q via %s", o.SentinelMaster, strings.Join(o.SentinelAddrs, ","))
	}
	if u, err := url.Parse(o.URL); err == nil {
		if u.Scheme == "unix" {
			return u.Path
		}
		return u.Host
	}
	return o.URL
}

// Conn resolves the connection options.
func (f *Factory) Conn() (*ConnOptions, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil {
		return f.conn, nil
	}
	cc, name, err := cfg.contextFor(f.V.GetString("context"))
	if err != nil {
		return nil, err
	}
	v := f.V
	explicit := func(key string) bool {
		fl := f.Flags.Lookup(key)
		return (fl != nil && fl.Changed) || os.Getenv(envName(key)) != ""
	}
	str := func(key, fromCtx string) string {
		if fromCtx == "" || explicit(key) {
			return v.GetString(key)
		}
		return fromCtx
	}
	list := func(key string, fromCtx []string) []string {
		if len(fromCtx) == 0 || explicit(key) {
			return splitList(v.GetStringSlice(key))
		}
		return fromCtx
	}
	o := &ConnOptions{
		Context:        name,
		URL:            str("url", cc.URL),
		Cluster:        list("cluster", cc.Cluster),
		SentinelMaster: str("sentinel-master", cc.SentinelMaster),
		SentinelAddrs:  list("sentinel-addrs", cc.SentinelAddrs),
		SentinelUser:   str("sentinel-user", cc.SentinelUser),
		User:           str("user", cc.User),
		TLSCA:          str("tls-ca", cc.TLSCA),
		TLSCert:        str("tls-cert", cc.TLSCert),
		TLSKey:         str("tls-key", cc.TLSKey),
		DialTimeout:    v.GetDuration("dial-timeout"),
		Timeout:        v.GetDuration("timeout"),
	}
	o.InsecureSkipVerify = v.GetBool("insecure-skip-verify") || cc.InsecureSkipVerify
	// The password never comes from argv: env first, then the context.
	switch {
	case os.Getenv("BUCKETCTL_PASSWORD") != "":
		o.password = os.Getenv("BUCKETCTL_PASSWORD")
	case os.Getenv("REDISCLI_AUTH") != "":
		o.password = os.Getenv("REDISCLI_AUTH")
	case cc.PasswordEnv != "":
		o.password = os.Getenv(cc.PasswordEnv)
	case cc.Password != "":
		o.password = cc.Password
	}
	switch {
	case os.Getenv("BUCKETCTL_SENTINEL_PASSWORD") != "":
		o.sentinelPassword = os.Getenv("BUCKETCTL_SENTINEL_PASSWORD")
	case cc.SentinelPasswordEnv != "":
		o.sentinelPassword = os.Getenv(cc.SentinelPasswordEnv)
	}
	if o.URL == "" {
		o.URL = "redis://127.0.0.1:6379"
	}
	if o.SentinelMaster != "" && len(o.SentinelAddrs) == 0 {
		return nil, usagef("--sentinel-master %q needs --sentinel-addrs host:port[,host:port]", o.SentinelMaster)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	f.conn = o
	return o, nil
}

func envName(key string) string {
	return "BUCKETCTL_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// Redis returns a connected client; the first call dials and PINGs, so an unreachable or
// misconfigured server is reported once, with its address and the cause.
func (f *Factory) Redis(ctx context.Context) (bucket.Client, error) {
	o, err := f.Conn()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		return f.client, nil
	}
	c, err := o.NewClient()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, o.DialTimeout+o.Timeout)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		_ = c.Close()
		var pe *PermissionError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &pe):
			// The server answered: it is reachable, the user may not PING.
			return nil, err
		}
		return nil, &UnreachableError{Addr: o.Addr(), Err: err}
	}
	f.client = c
	return c, nil
}

// Store returns a Store over the connected client.
func (f *Factory) Store(ctx context.Context) (*bucket.Store, error) {
	c, err := f.Redis(ctx)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		var opts []bucket.Option
		if f.V.GetString("clock") == "client" {
			opts = append(opts, bucket.WithClientClock(f.Now))
		}
		f.store = bucket.NewStore(c, opts...)
	}
	return f.store, nil
}

// Close closes the client, if one was made.
func (f *Factory) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		_ = f.client.Close()
		f.client = nil
	}
}

// NewClient builds the go-redis client: standalone (redis://, rediss://, unix://), Cluster
// or Sentinel. Retries are off (MaxRetries: -1): a decision re-sent after a dropped
// connection could be applied twice. A Cluster client still follows MOVED and ASK
// redirects (MaxRedirects, default 3), which prove the command did not run; its own
// re-sending after network errors is turned off per command by bucket.Store, which marks
// decisions NoRetry (see runOnce in bucket/store.go). Every server reply of NOPERM becomes
// a PermissionError naming the user.
func (o *ConnOptions) NewClient() (bucket.Client, error) {
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	acl := aclHook{user: o.User}
	pool := o.PoolSize
	switch {
	case len(o.Cluster) > 0:
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: o.Cluster, Username: o.User, Password: o.password,
			TLSConfig: tlsCfg, DialTimeout: o.DialTimeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
			MaxRetries: -1, PoolSize: pool})
		// Every command, pipeline and per-master call runs on a node's client, made
		// lazily, so registering here, before any is made, covers them all.
		c.OnNewNode(func(n *redis.Client) { n.AddHook(acl) })
		return c, nil
	case o.SentinelMaster != "":
		c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: o.SentinelMaster, SentinelAddrs: o.SentinelAddrs,
			Username: o.User, Password: o.password, SentinelUsername: o.SentinelUser, SentinelPassword: o.sentinelPassword,
			TLSConfig: tlsCfg, DialTimeout: o.DialTimeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
			MaxRetries: -1, PoolSize: pool})
		c.AddHook(acl)
		o.master = &dialedAddr{}
		c.AddHook(o.master)
		return c, nil
	}
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, usagef("--url %q: %v (use redis://host:port/db, rediss://host:port or unix:///path/to/socket)", redactURL(o.URL), err)
	}
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
	opt.MaxRetries = -1
	if pool > 0 {
		opt.PoolSize = pool
	}
	c := redis.NewClient(opt)
	c.AddHook(acl)
	return c, nil
}

// aclHook turns a server's refusal by ACL (NOPERM, also for a command a script calls) into
// a PermissionError naming the user and the command, for commands and pipelines alike.
type aclHook struct{ user string }

func (aclHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h aclHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return h.wrap(next(ctx, cmd)) }
}

func (h aclHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if e := c.Err(); e != nil {
				if w := h.wrap(e); w != e {
					c.SetErr(w)
				}
			}
		}
		return h.wrap(err)
	}
}

func (h aclHook) wrap(err error) error {
	var pe *PermissionError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	d, ok := bucket.Denied(err)
	if !ok {
		return err
	}
	user := h.user
	if user == "" {
		user = "default"
	}
	return &PermissionError{User: user, Denial: d, Err: err}
}

// nodeOf returns a function naming the master that serves a key, for -o wide and the
// node field of JSON and YAML: the slot's master for a Cluster (from go-redis's cached slot
// map: no round trip), the master a Sentinel client dialled, or the one server.
func (f *Factory) nodeOf(ctx context.Context) (func(key string) string, error) {
	c, err := f.Redis(ctx)
	if err != nil {
		return nil, err
	}
	o, err := f.Conn()
	if err != nil {
		return nil, err
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return func(key string) string {
			m, err := cc.MasterForKey(ctx, key)
			if err != nil {
				return "?"
			}
			return m.Options().Addr
		}, nil
	}
	if o.SentinelMaster != "" {
		return func(string) string { return o.master.get() }, nil
	}
	addr := o.Addr()
	return func(string) string { return addr }, nil
}

// dialedAddr is a go-redis hook that remembers the remote address of the last connection
// its client dialled. A Sentinel failover client dials the master the sentinels name, so
// this names the master in use, with no query of its own.
type dialedAddr struct{ addr atomic.Pointer[string] }

func (d *dialedAddr) get() string {
	if d == nil {
		return "?"
	}
	if p := d.addr.Load(); p != nil {
		return *p
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

func (d *dialedAddr) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (d *dialedAddr) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (o *ConnOptions) tlsConfig() (*tls.Config, error) {
	if o.TLSCA == "" && o.TLSCert == "" && !o.InsecureSkipVerify && !strings.HasPrefix(o.URL, "rediss://") {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // opt-in flag, labelled insecure
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usagef("--tls-ca %s: no PEM certificates in the file", o.TLSCA)
		}
		cfg.RootCAs = pool
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, usagef("--tls-cert/--tls-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// redactURL hides a password in a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
