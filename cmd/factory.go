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
	// Now is the local clock (tests pin it).
	Now func() time.Time
	// Flags are the root's persistent flags, to tell a flag given from its default.
	Flags *pflag.FlagSet
	// Check is how the first connection checks that the server answers: a PING of its
	// own, by a pipeline (watch of given keys) or in the first read (inspect of given
	// keys); see connect.Check.
	Check connect.Check
	// Getenv is the environment every command reads (passwords, password-env, the
	// BUCKETCTL_<FLAG> variables, the config file's default location); nil: os.Getenv.
	// LookupEnv, when set, is read instead, and tells a variable set to "" from an unset
	// one.
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	// Signals says this Factory serves the process: a command that is not quick catches
	// Ctrl-C and SIGTERM (see catchSignals).
	Signals bool

	signals     context.Context
	stopSignals context.CancelFunc
	// stopDeadline releases the one deadline of a one-key command (see limitOneKey).
	stopDeadline context.CancelFunc

	mu     sync.Mutex
	cfg    *connect.Config
	client bucket.Client
	conn   *connect.Server
	store  *bucket.Store
}

// VersionInfo is stamped in at build time.
type VersionInfo struct{ Version, Commit, Date string }

// NewFactory returns a Factory over io.
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
		f.conn.BoundByContext = f.stopDeadline != nil // see limitOneKey
	}
	return f.conn, nil
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

// Store returns a Store over the connected client.
func (f *Factory) Store(ctx context.Context) (*bucket.Store, error) {
	c, err := f.Redis(ctx)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.store == nil {
		// The application's spec is the application's: a flag never rewrites a stored one.
		opts := []bucket.Option{bucket.WithStoredSpec()}
		if f.flag("clock") == "client" {
			opts = append(opts, bucket.WithClientClock(f.Now))
		}
		f.store = bucket.NewStore(c, opts...)
	}
	return f.store, nil
}

// limitOneKey gives a one-key command (check, consume, inspect and reset of given keys)
// one deadline, --timeout from now, shared by its whole exchange with Redis: the
// connection (dial and handshake), every request, and any fallback or retry of the
// client's. A server that stops answering ends it within --timeout, not a multiple of it.
// A reset that may still ask for confirmation on the terminal keeps the limit per request,
// so the question does not eat the time.
func (f *Factory) limitOneKey(cmd *cobra.Command) {
	switch cmd.Name() {
	case "check", "consume":
	case "inspect", "reset":
		if fl := cmd.Flags().Lookup("match"); fl != nil && fl.Changed {
			return
		}
		if yes, err := cmd.Flags().GetBool("yes"); cmd.Name() == "reset" && err == nil && !yes && f.IO.CanPrompt() {
			return
		}
	default:
		return
	}
	d, _ := f.Flags.GetDuration("timeout")
	if d <= 0 {
		return // a usage error, reported when the server is resolved
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), d)
	cmd.SetContext(ctx)
	f.stopDeadline = cancel
}

// Close closes the client, if one was made.
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

// nodeOf returns a function naming the master that serves a key, for -o wide and the
// node field of JSON and YAML (see connect.Server.NodeOf).
func (f *Factory) nodeOf(ctx context.Context) (func(key string) string, error) {
	c, err := f.Redis(ctx)
	if err != nil {
		return nil, err
	}
	o, err := f.Conn()
	if err != nil {
		return nil, err
	}
	return o.NodeOf(ctx, c), nil
}

// errText is the text err is shown as, wherever it is shown (stderr, a live view's
// banner): what the error says, with every secret this invocation may hold hidden, as an
// error may quote a URL or a server's reply, and no escape sequence, as it may quote what
// the user typed or what a server or a key holds.
func (f *Factory) errText(err error) string {
	var r *connect.Redactor // (nil: the secrets found by their form alone)
	if f != nil {
		r = f.redactor()
	}
	msg := errorMessage(err)
	if f != nil {
		msg = f.namedLoss(msg, err)
	}
	return format.SafeText(r.Apply(msg))
}

// redactor knows every secret this invocation may hold (see connect.Secrets).
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

// getenv reads the environment through the Factory, so tests can give their own.
func (f *Factory) getenv(k string) string {
	v, _ := f.lookupEnv(k)
	return v
}

// lookupEnv is os.LookupEnv through the Factory: LookupEnv, else Getenv (where a variable
// set to "" is unset), else the process's.
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

// DefaultConfigPath is the config file's default location in the Factory's environment.
func (f *Factory) DefaultConfigPath() string {
	return connect.DefaultPath(f.getenv)
}

// bindEnv gives the root's flags their BUCKETCTL_<FLAG> variables (see connect.BindEnv).
func (f *Factory) bindEnv() error { return connect.BindEnv(f.Flags, f.getenv, valueProblem) }

// flag is the value of the root's persistent flag name, as typed, bound or defaulted.
func (f *Factory) flag(name string) string {
	if fl := f.Flags.Lookup(name); fl != nil {
		return fl.Value.String()
	}
	return ""
}
