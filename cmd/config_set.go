package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/bucketctl/bucketctl/cmd/connect"
)

// contextFlags are the flags set-context writes into a context, under their names.
var contextFlags = []string{"url", "cluster", "sentinel-master", "sentinel-addrs", "sentinel-user", "user",
	"tls-ca", "tls-cert", "tls-key", "insecure-skip-verify", "password-env", "sentinel-password-env"}

// SetContextOptions are `config set-context`'s: Values are the flags given, as the file's
// values, Unset the keys to remove.
type SetContextOptions struct {
	Env
	Name    string
	Current bool
	Values  map[string]*yaml.Node
	Unset   []string
}

func newCmdSetContext(f *Factory) *cobra.Command {
	opts := &SetContextOptions{}
	cmd := &cobra.Command{
		Use:   "set-context [NAME | --current] [connection flags]",
		Short: "Create or change a context with the connection flags given",
		Long: `Create the context NAME, or change it, with the connection flags given on this command
line (--url, --cluster, --sentinel-master, --sentinel-addrs, --sentinel-user, --user,
--tls-ca, --tls-cert, --tls-key, --insecure-skip-verify); other keys are kept. The file
is written in place, comments kept; a new file is created readable by you only.

Passwords never go on the command line: --password-env names the environment variable
that holds the password (as REDISCLI_AUTH would), and a --url holding a password is
refused.`,
		Example: `  bucketctl config set-context local --url 127.0.0.1:6379
  bucketctl config set-context prod --cluster 10.0.0.1:6379,10.0.0.2:6379 --user ops --password-env PROD_REDIS_PASSWORD --tls-ca /etc/ssl/redis-ca.pem
  bucketctl config set-context --current --user ops-readonly
  bucketctl config set-context prod --unset tls-ca`,
		ValidArgsFunction: completeContextArgs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return usagef("set-context takes one context name, got %d (see '%s --help')", len(args), cmd.CommandPath())
			case len(args) == 0 && !opts.Current:
				return usagef("set-context needs a context name, or --current for the current one (see '%s --help')", cmd.CommandPath())
			case len(args) == 1 && opts.Current:
				return usagef("set-context needs a context name or --current, not both (see '%s --help')", cmd.CommandPath())
			case len(args) == 1:
				opts.Name = args[0]
			}
			for _, u := range opts.Unset {
				if !slices.Contains(connect.ContextFields, u) {
					return usagef("--unset %q: not a context field (fields: %s)", u, strings.Join(connect.ContextFields, ", "))
				}
			}
			var err error
			if opts.Values, err = changedContextFlags(cmd.Flags()); err != nil {
				return err
			}
			return dispatch(cmd, f, opts, &opts.Env, nil, nil, setContextRun)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Current, "current", false, "change the current context")
	fl.String("password-env", "", "environment variable holding the password (never the password itself)")
	fl.String("sentinel-password-env", "", "environment variable holding the sentinels' password")
	fl.StringSliceVar(&opts.Unset, "unset", nil, "remove these fields from the context (e.g. tls-ca,user)")
	return cmd
}

func setContextRun(opts *SetContextOptions) error {
	f := opts.src
	cfg, err := f.configToWrite()
	if err != nil {
		return err
	}
	name := opts.Name
	if opts.Current {
		if name = cfg.CurrentContext; name == "" {
			return usagef("--current: current-context is not set (name the context, or 'bucketctl config use-context NAME')")
		}
	}
	path := f.configPath()
	doc, err := connect.ReadDoc(path)
	if err != nil {
		return err
	}
	verb, err := connect.SetContext(doc, name, opts.Values, opts.Unset)
	if err != nil {
		return err
	}
	if err := connect.WriteDoc(path, doc); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Context %q %s in %s.\n", name, verb, path)
	return nil
}

// configToWrite is the config a verb that writes the file edits: a --config file that does
// not exist yet is empty (the write creates it); one that does not load is not edited.
func (f *Factory) configToWrite() (*connect.Config, error) {
	if p := f.flag("config"); p != "" {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return connect.Load("", p) // none, named as the file to create
		}
	}
	return f.Config()
}

// changedContextFlags returns the context's flags given as YAML values, refusing a password.
func changedContextFlags(fs *pflag.FlagSet) (map[string]*yaml.Node, error) {
	const passwordHome = "use --password-env VAR (the variable holding the password) instead"
	out := map[string]*yaml.Node{}
	for _, name := range contextFlags {
		fl := fs.Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		switch name {
		case "cluster", "sentinel-addrs":
			addrs, _ := fs.GetStringSlice(name)
			if err := connect.TypedListPassword(name, addrs, passwordHome); err != nil {
				return nil, err
			}
			seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, a := range connect.SplitList(addrs) {
				seq.Content = append(seq.Content, connect.ScalarNode(a))
			}
			out[name] = seq
		case "insecure-skip-verify":
			out[name] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fl.Value.String()}
		case "url":
			u := connect.NormalizeURL(fl.Value.String())
			if err := connect.TypedPassword(name, u, passwordHome); err != nil {
				return nil, err
			}
			out[name] = connect.ScalarNode(u)
		default:
			out[name] = connect.ScalarNode(fl.Value.String())
		}
	}
	return out, nil
}
