package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
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
	var err error
	if f.cfg == nil {
		f.cfg, err = connect.Load(f.flag("config"), f.DefaultConfigPath())
	}
	return f.cfg, err
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
	return connect.Secrets(f.getenv, cfg, conn, f.flag("url"), f.flag("cluster"), f.flag("sentinel-addrs"))
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

// IOStreams is where a command reads and writes (see package iostreams).
type IOStreams = iostreams.IOStreams

// Env is what a command's run reads besides its flags; src gives the config, the server
// and the Store, lazily. A test builds it with Factory.env and calls the run directly.
type Env struct {
	IO     *IOStreams
	Ctx    context.Context
	Now    func() time.Time
	Getenv func(string) string
	src    *Factory
}

func (f *Factory) env(ctx context.Context) Env {
	return Env{IO: f.IO, Ctx: ctx, Now: f.Now, Getenv: f.getenv, src: f}
}

// dispatch ends a command's RunE: it catches signals, fills the Env and the spec flags
// given, then runs runF (a test's) or else run.
func dispatch[O any](cmd *cobra.Command, f *Factory, opts *O, env *Env, spec *SpecFlags, runF, run func(*O) error) error {
	f.catchSignals(cmd)
	*env = f.env(cmd.Context())
	if spec != nil {
		spec.given(cmd)
	}
	if runF != nil {
		return runF(opts)
	}
	return run(opts)
}

// Selection are the options of the commands that read many buckets.
type Selection struct {
	Match  string
	Limit  int
	Spec   SpecFlags
	Output string
}

// safe escapes a key name or a message holding one for a person's terminal.
func safe(s string) string { return format.SafeKey(s) }

// confirm asks question on the terminal; any answer but yes cancels (exit 1).
func confirm(io *IOStreams, question string) error {
	answer, err := io.Prompt(question)
	if err != nil {
		return err
	}
	if a := strings.ToLower(answer); a != "y" && a != "yes" {
		fmt.Fprintln(io.ErrOut, "cancelled: nothing changed")
		return &SilentError{Code: ExitError}
	}
	return nil
}
