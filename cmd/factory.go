package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Factory holds a command's lazy dependencies: a command that fails flag parsing never
// reads the config or dials Redis.
type Factory struct {
	IO      *IOStreams
	Version VersionInfo
	Now     func() time.Time
	Flags   *pflag.FlagSet // the root's persistent flags
	Check   connect.Check
	// Getenv is the environment (nil: the process's); LookupEnv, when set, wins.
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	Signals   bool // this Factory serves the process (see catchSignals)

	quick        bool
	signals      context.Context
	stopSignals  context.CancelFunc
	stopDeadline context.CancelFunc // see limitOneKey

	mu     sync.Mutex
	cfg    *connect.Config
	client bucket.Client
	conn   *connect.Server
	store  *bucket.Store
}

// VersionInfo is stamped in at build time.
type VersionInfo struct{ Version, Commit, Date string }

func NewFactory(io *IOStreams, version VersionInfo) *Factory {
	return &Factory{IO: io, Version: version, Now: time.Now, Flags: pflag.NewFlagSet("bucketctl", pflag.ContinueOnError)}
}

// Config reads the config file once.
func (f *Factory) Config() (*connect.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cfg != nil {
		return f.cfg, nil
	}
	cfg, err := connect.Load(f.flag("config"), f.DefaultConfigPath())
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return cfg, nil
}

// Conn resolves the server, once (see connect.Resolve).
func (f *Factory) Conn() (*connect.Server, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		if f.conn, err = connect.Resolve(f.Flags, f.lookupEnv, cfg); err != nil {
			return nil, err
		}
		f.conn.BoundByContext = f.stopDeadline != nil
	}
	return f.conn, nil
}

// Redis returns the connected client; the first call dials and checks the server.
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
	if w := o.InsecureWarning(); w != "" {
		fmt.Fprintln(f.IO.ErrOut, w)
	}
	pctx, cancel := context.WithTimeout(ctx, o.DialTimeout+o.Timeout)
	defer cancel()
	c, err := o.Dial(pctx, f.Check)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, ctx.Err()
		}
		return nil, err
	}
	f.client = c
	return c, nil
}

func (f *Factory) Store(ctx context.Context) (*bucket.Store, error) {
	c, err := f.Redis(ctx)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		opts := []bucket.Option{bucket.WithStoredSpec()} // a flag never rewrites a stored spec
		if f.flag("clock") == "client" {
			opts = append(opts, bucket.WithClientClock(f.Now))
		}
		f.store = bucket.NewStore(c, opts...)
	}
	return f.store, nil
}

// limitOneKey gives a one-key command one deadline, --timeout from now, for all its requests.
func (f *Factory) limitOneKey(cmd *cobra.Command) {
	d, _ := f.Flags.GetDuration("timeout")
	if d <= 0 {
		return // a usage error, reported when the server is resolved
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), d)
	cmd.SetContext(ctx)
	f.stopDeadline = cancel
}

// quickKey readies check, consume and inspect of given keys: one deadline, and Ctrl-C
// left its default action (they change at most one atomic script's worth).
func (f *Factory) quickKey(cmd *cobra.Command) {
	f.quick = true
	f.limitOneKey(cmd)
}

func (f *Factory) Close() {
	if f.stopDeadline != nil {
		f.stopDeadline()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		_ = f.client.Close()
		f.client = nil
	}
}

func (f *Factory) nodeOf(ctx context.Context) (func(key string) string, error) {
	c, err := f.Redis(ctx)
	if err != nil {
		return nil, err
	}
	return f.conn.NodeOf(ctx, c), nil
}

// errText is err as shown anywhere: one line, secrets hidden, no escape sequence.
func (f *Factory) errText(err error) string {
	var r *connect.Redactor // nil: the secrets found by their form alone
	msg := errorMessage(err)
	if f != nil {
		r, msg = f.redactor(), f.namedLoss(msg, err)
	}
	return format.SafeText(r.Apply(msg))
}

func (f *Factory) redactor() *connect.Redactor {
	f.mu.Lock()
	cfg, conn := f.cfg, f.conn
	f.mu.Unlock()
	var given []string
	if f.Flags != nil {
		for _, k := range []string{"url", "cluster", "sentinel-addrs"} {
			if fl := f.Flags.Lookup(k); fl != nil {
				given = append(given, fl.Value.String())
			}
		}
	}
	return connect.Secrets(f.getenv, cfg, conn, given...)
}

func (f *Factory) getenv(k string) string {
	v, _ := f.lookupEnv(k)
	return v
}

// lookupEnv is os.LookupEnv through the Factory (Getenv's "" is unset).
func (f *Factory) lookupEnv(k string) (string, bool) {
	switch {
	case f.LookupEnv != nil:
		return f.LookupEnv(k)
	case f.Getenv != nil:
		v := f.Getenv(k)
		return v, v != ""
	}
	return os.LookupEnv(k)
}

// DefaultConfigPath is the config file's default location.
func (f *Factory) DefaultConfigPath() string {
	return connect.DefaultPath(f.getenv)
}

func (f *Factory) bindEnv() error { return connect.BindEnv(f.Flags, f.getenv, valueProblem) }

// flag is the value of the root's flag name, as typed, bound or defaulted.
func (f *Factory) flag(name string) string {
	if fl := f.Flags.Lookup(name); fl != nil {
		return fl.Value.String()
	}
	return ""
}
