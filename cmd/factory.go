package cmd

import (
	"context"
	"errors"
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
		if refused := f.serverRefusal(o, err); refused != err {
			return nil, refused
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
