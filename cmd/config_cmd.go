package cmd

import (
	"cmp"
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
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// NewCmdConfig groups the verbs that read and edit the config file, as kubectl's do.
func NewCmdConfig(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and edit the config file's contexts (like kubectl config)",
		Long: `The config file (` + f.DefaultConfigPath() + `, or --config) holds named contexts:
connection settings with the connection flags' names (url, cluster, sentinel-master,
sentinel-addrs, user, password-env, tls-ca, ...). Edits write the file in place and keep
its comments. No verb ever prints a password: view shows them as xxxxx.`,
		Example: `  bucketctl config get-contexts
  bucketctl config set-context prod --cluster 10.0.0.1:6379 --user ops --password-env PROD_REDIS_PASSWORD
  bucketctl config use-context prod
  bucketctl config view`,
		Args: cobra.ArbitraryArgs,
		RunE: helpOrUnknown,
	}
	view, viewOpts := configVerb(f, &cobra.Command{
		Use:   "view",
		Short: "Print the config file, passwords redacted",
		Long: `Print the config file as it is written (comments included), with every password and
every password inside a URL replaced by xxxxx. -o json prints the decoded settings.`,
		Example: "  bucketctl config view\n  bucketctl config view -o json",
		Args:    noArgs,
	}, configViewRun)
	addOutputFlag(view, &viewOpts.Output, output.FormatYAML, output.FormatJSON)
	get, getOpts := configVerb(f, &cobra.Command{
		Use:               "get-contexts [NAME...]",
		Short:             "List the contexts (the current one marked *)",
		Example:           "  bucketctl config get-contexts\n  bucketctl config get-contexts prod -o json\n  bucketctl config get-contexts -o name",
		ValidArgsFunction: completeContextArgs(f, true),
	}, getContextsRun)
	addOutputFlag(get, &getOpts.Output, output.FormatTable, output.FormatJSON, output.FormatYAML, "name")
	current, _ := configVerb(f, &cobra.Command{Use: "current-context", Short: "Print the current context's name",
		Example: "  bucketctl config current-context", Args: noArgs}, currentContextRun)
	use, _ := configVerb(f, &cobra.Command{Use: "use-context NAME", Short: "Make NAME the current context (writes current-context)",
		Example: "  bucketctl config use-context prod", ValidArgsFunction: completeContextArgs(f, false),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s needs a context name (see '%s --help')", cmd.Name(), cmd.CommandPath())
			}
			return nil
		}}, useContextRun)
	cmd.AddCommand(view, get, newCmdSetContext(f), current, use)
	return cmd
}

// ConfigOptions are a config verb's: Names are its arguments (the contexts), Output its -o;
// set-context's Values are the flags given, as the file's values, Unset the keys to remove.
type ConfigOptions struct {
	Env
	Names   []string
	Output  string
	Current bool
	Values  map[string]*yaml.Node
	Unset   []string
}

// configVerb makes cmd run run with its arguments as Names.
func configVerb(f *Factory, cmd *cobra.Command, run func(*ConfigOptions) error) (*cobra.Command, *ConfigOptions) {
	opts := &ConfigOptions{}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Names = args
		return dispatch(cmd, f, opts, &opts.Env, nil, nil, run)
	}
	return cmd, opts
}

func (f *Factory) configPath() string { return cmp.Or(f.flag("config"), f.DefaultConfigPath()) }

func currentContextRun(opts *ConfigOptions) error {
	cfg, err := opts.src.Config()
	if err != nil {
		return err
	}
	if cfg.CurrentContext == "" {
		return errors.New("current-context is not set (set it with 'bucketctl config use-context NAME')")
	}
	_, err = fmt.Fprintln(opts.IO.Out, format.SafeText(cfg.CurrentContext))
	return err
}

func useContextRun(opts *ConfigOptions) error {
	f, name := opts.src, opts.Names[0]
	cfg, err := f.configToWrite()
	if err != nil {
		return err
	}
	if _, _, err := cfg.ContextFor(name); err != nil {
		return err
	}
	path := f.configPath()
	doc, err := connect.ReadDoc(path)
	if err != nil {
		return err
	}
	connect.SetNode(doc, "current-context", connect.ScalarNode(name))
	if err := connect.WriteDoc(path, doc); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Switched to context %q.\n", name)
	return nil
}

// completeContextArgs completes context names, one only unless many.
func completeContextArgs(f *Factory, many bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	inner := completeContexts(f)
	return func(cmd *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return inner(cmd, args, s)
	}
}

func newCmdSetContext(f *Factory) *cobra.Command {
	cmd, opts := configVerb(f, &cobra.Command{
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
	}, setContextRun)
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) > 1:
			return usagef("set-context takes one context name, got %d (see '%s --help')", len(args), cmd.CommandPath())
		case len(args) == 0 && !opts.Current:
			return usagef("set-context needs a context name, or --current for the current one (see '%s --help')", cmd.CommandPath())
		case len(args) == 1 && opts.Current:
			return usagef("set-context needs a context name or --current, not both (see '%s --help')", cmd.CommandPath())
		}
		for _, u := range opts.Unset {
			if !slices.Contains(connect.ContextFields, u) {
				return usagef("--unset %q: not a context field (fields: %s)", u, strings.Join(connect.ContextFields, ", "))
			}
		}
		var err error
		opts.Values, err = changedContextFlags(cmd.Flags())
		return err
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Current, "current", false, "change the current context")
	fl.String("password-env", "", "environment variable holding the password (never the password itself)")
	fl.String("sentinel-password-env", "", "environment variable holding the sentinels' password")
	fl.StringSliceVar(&opts.Unset, "unset", nil, "remove these fields from the context (e.g. tls-ca,user)")
	return cmd
}

func setContextRun(opts *ConfigOptions) error {
	f := opts.src
	cfg, err := f.configToWrite()
	if err != nil {
		return err
	}
	name := cfg.CurrentContext
	if !opts.Current {
		name = opts.Names[0]
	} else if name == "" {
		return usagef("--current: current-context is not set (name the context, or 'bucketctl config use-context NAME')")
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
	for _, name := range connect.ContextFields {
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

func configViewRun(opts *ConfigOptions) error {
	cfg, err := opts.src.Config()
	if err != nil {
		return err
	}
	if opts.Output == output.FormatJSON {
		return output.WriteData(opts.IO.Out, output.FormatJSON, connect.RedactConfig(cfg))
	}
	doc, err := connect.ReadDoc(opts.src.configPath())
	if err != nil {
		return err
	}
	connect.RedactNode(doc)
	return output.WriteNode(opts.IO.Out, doc)
}

func getContextsRun(opts *ConfigOptions) error {
	cfg, err := opts.src.Config()
	if err != nil {
		return err
	}
	names := opts.Names
	for _, n := range names {
		if _, _, err := cfg.ContextFor(n); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		names = cfg.ContextNames()
	}
	type row struct {
		Name     string `json:"name"`
		Current  bool   `json:"current"`
		Server   string `json:"server"`
		User     string `json:"user,omitempty"`
		Insecure bool   `json:"insecure-skip-verify,omitempty"`
	}
	rows := make([]row, 0, len(names))
	for _, n := range names {
		c := cfg.Contexts[n]
		rows = append(rows, row{Name: n, Current: n == cfg.CurrentContext, Server: connect.ContextServer(c), User: c.User, Insecure: c.InsecureSkipVerify})
	}
	switch opts.Output {
	case "name":
		for _, r := range rows {
			fmt.Fprintln(opts.IO.Out, format.SafeText(r.Name))
		}
		return nil
	case output.FormatJSON, output.FormatYAML:
		return output.WriteData(opts.IO.Out, opts.Output, rows)
	}
	t := output.NewTable(opts.IO, "CURRENT", "NAME", "SERVER", "USER", "TLS")
	for _, r := range rows {
		cur, tls := "", ""
		if r.Current {
			cur = "*"
		}
		if r.Insecure {
			tls = "INSECURE (not verified)"
		}
		t.Add(cur, format.SafeText(r.Name), format.SafeText(r.Server), format.SafeText(r.User), tls)
	}
	return t.Render()
}
