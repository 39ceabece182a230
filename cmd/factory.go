package cmd

import (
	"context"
	"errors"
	"strings"
	"sync"
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
	// PipelinedReads says the command talks to Redis by pipelines only (inspect and watch
	// of given keys), so the reachability PING goes by one too (see ping).
	PipelinedReads bool
	// Getenv is the environment every command reads (passwords, password-env, the
	// BUCKETCTL_<FLAG> variables, the config file's default location); nil: os.Getenv.
	Getenv func(string) string
	// Signals says this Factory serves the process: a command that is not quick catches
	// Ctrl-C and SIGTERM (see catchSignals).
	Signals bool

	signals     context.Context
	stopSignals context.CancelFunc

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
	cfg, err := loadConfig(f.V.GetString("config"), f.DefaultConfigPath())
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return cfg, nil
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
		return (fl != nil && fl.Changed) || f.getenv(envName(key)) != ""
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
	if err := f.passwords(o, cc, name); err != nil {
		return nil, err
	}
	if o.URL == "" {
		o.URL = "redis://127.0.0.1:6379"
	}
	o.URL = normalizeURL(o.URL)
	if fl := f.Flags.Lookup("url"); fl != nil && fl.Changed {
		if _, ok := urlPassword(o.URL); ok {
			return nil, usagef("--url %s holds a password, which the command line would show to every user of this machine (ps, shell history): "+
				"put it in REDISCLI_AUTH or BUCKETCTL_PASSWORD, or in the config file's context (password-env)", redactURL(o.URL))
		}
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

// passwords sets the data nodes' and the sentinels' passwords. They never come from argv:
// the environment first, then the context (its password-env, else its password). A
// password-env naming an unset variable is a usage error, not a silent "no password".
func (f *Factory) passwords(o *ConnOptions, cc ContextConfig, ctxName string) error {
	fromEnv := func(field, name string) (string, error) {
		if v := f.getenv(name); v != "" {
			return v, nil
		}
		return "", usagef("context %q: %s names the environment variable %s, which is not set (export it, or remove %s)", ctxName, field, name, field)
	}
	var err error
	switch {
	case f.getenv("BUCKETCTL_PASSWORD") != "":
		o.password = f.getenv("BUCKETCTL_PASSWORD")
	case f.getenv("REDISCLI_AUTH") != "":
		o.password = f.getenv("REDISCLI_AUTH")
	case cc.PasswordEnv != "":
		if o.password, err = fromEnv("password-env", cc.PasswordEnv); err != nil {
			return err
		}
	case cc.Password != "":
		o.password = cc.Password
	}
	switch {
	case f.getenv("BUCKETCTL_SENTINEL_PASSWORD") != "":
		o.sentinelPassword = f.getenv("BUCKETCTL_SENTINEL_PASSWORD")
	case cc.SentinelPasswordEnv != "":
		if o.sentinelPassword, err = fromEnv("sentinel-password-env", cc.SentinelPasswordEnv); err != nil {
			return err
		}
	}
	return nil
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

// ping checks the server answers. It goes through the connection pool the command will
// use: go-redis keeps pipelines in a pool of their own, so a command that reads only by
// pipelines (PipelinedReads) pings by one and opens one connection, as redis-cli would,
// not two. (Standalone servers only: a Sentinel client's pipeline reports a down sentinel
// as a timeout rather than the refused connection.)
func (f *Factory) ping(ctx context.Context, c bucket.Client) error {
	if _, standalone := c.(*redis.Client); !f.PipelinedReads || !standalone || f.conn.SentinelMaster != "" {
		return c.Ping(ctx).Err()
	}
	var cmd *redis.StatusCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.Ping(ctx)
		return nil
	})
	if err == nil {
		err = cmd.Err()
	}
	return err
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
	if err := f.ping(pctx, c); err != nil {
		_ = c.Close()
		var pe *PermissionError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &pe):
			// The server answered: it is reachable, the user may not PING.
			return nil, err
		}
		if plain := o.plainTextPort(err); plain != nil {
			err = plain
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

// bindEnv gives each persistent flag not set on the command line the value of its
// BUCKETCTL_<FLAG> variable (dashes as underscores) from the Factory's environment, when
// that is set and not empty: flags win over the environment, the environment over the
// config file (whose contexts only fill what neither gave; see Conn).
func (f *Factory) bindEnv(flags *pflag.FlagSet) {
	flags.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed {
			return
		}
		if v := f.getenv(envName(fl.Name)); v != "" {
			f.V.Set(fl.Name, v)
		}
	})
}
