package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

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
	cmd.AddCommand(newCmdConfigView(f), newCmdGetContexts(f), newCmdSetContext(f))
	cmd.AddCommand(newCmdContextVerbs(f)...)
	return cmd
}

// configPath is the file the config verbs read and write.
func (f *Factory) configPath() string {
	if p := f.V.GetString("config"); p != "" {
		return p
	}
	return f.DefaultConfigPath()
}

// ConfigViewOptions are `config view`'s.
type ConfigViewOptions struct {
	Env
	Output string
}

func newCmdConfigView(f *Factory) *cobra.Command {
	opts := &ConfigViewOptions{}
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the config file, passwords redacted",
		Long: `Print the config file as it is written (comments included), with every password and
every password inside a URL replaced by xxxxx. -o json prints the decoded settings.`,
		Example: "  bucketctl config view\n  bucketctl config view -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dispatch(cmd, f, opts, &opts.Env, nil, nil, configViewRun)
		},
	}
	addOutputFlag(cmd, &opts.Output, output.FormatYAML, output.FormatJSON)
	return cmd
}

// configViewRun prints the config file with its passwords redacted: as written (yaml), or
// its decoded settings (json).
func configViewRun(opts *ConfigViewOptions) error {
	f := opts.src
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if opts.Output == output.FormatJSON {
		return output.WriteData(opts.IO.Out, output.FormatJSON, connect.RedactConfig(cfg))
	}
	doc, err := connect.ReadDoc(f.configPath())
	if err != nil {
		return err
	}
	connect.RedactNode(doc)
	return connect.EncodeNode(opts.IO.Out, doc)
}

// GetContextsOptions are `config get-contexts`'s: Names are the contexts to list (none:
// all of them).
type GetContextsOptions struct {
	Env
	Names  []string
	Output string
}

func newCmdGetContexts(f *Factory) *cobra.Command {
	opts := &GetContextsOptions{}
	cmd := &cobra.Command{
		Use:     "get-contexts [NAME...]",
		Short:   "List the contexts (the current one marked *)",
		Example: "  bucketctl config get-contexts\n  bucketctl config get-contexts prod -o json\n  bucketctl config get-contexts -o name",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Names = args
			return dispatch(cmd, f, opts, &opts.Env, nil, nil, getContextsRun)
		},
		ValidArgsFunction: completeContextArgs(f),
	}
	addOutputFlag(cmd, &opts.Output, output.FormatTable, output.FormatJSON, output.FormatYAML, "name")
	return cmd
}

// getContextsRun lists the contexts asked for (all when none is), the current one marked.
func getContextsRun(opts *GetContextsOptions) error {
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
		Name    string `json:"name"`
		Current bool   `json:"current"`
		Server  string `json:"server"`
		User    string `json:"user,omitempty"`
	}
	rows := make([]row, 0, len(names))
	for _, n := range names {
		c := cfg.Contexts[n]
		rows = append(rows, row{Name: n, Current: n == cfg.CurrentContext, Server: connect.ContextServer(c), User: c.User})
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
	t := output.NewTable(opts.IO, "CURRENT", "NAME", "SERVER", "USER")
	for _, r := range rows {
		cur := ""
		if r.Current {
			cur = "*"
		}
		// Names and values come from a file: no escape sequence reaches the terminal.
		t.Add(cur, format.SafeText(r.Name), format.SafeText(r.Server), format.SafeText(r.User))
	}
	return t.Render()
}

// ContextOptions are `config current-context`'s and `config use-context`'s: Name is the
// context to switch to ("" for current-context).
type ContextOptions struct {
	Env
	Name string
}

// currentContextRun prints the current context's name.
func currentContextRun(opts *ContextOptions) error {
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

// newCmdContextVerbs builds current-context and use-context NAME, which share ContextOptions.
func newCmdContextVerbs(f *Factory) []*cobra.Command {
	verb := func(use, short, example string, args cobra.PositionalArgs, run func(*ContextOptions) error) *cobra.Command {
		opts := &ContextOptions{}
		return &cobra.Command{Use: use, Short: short, Example: example, Args: args,
			RunE: func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					opts.Name = args[0]
				}
				return dispatch(cmd, f, opts, &opts.Env, nil, nil, run)
			},
		}
	}
	use := verb("use-context NAME", "Make NAME the current context (writes current-context)",
		"  bucketctl config use-context prod", exactArgs(1, "a context name"), useContextRun)
	use.ValidArgsFunction = completeContextArgs(f)
	return []*cobra.Command{verb("current-context", "Print the current context's name",
		"  bucketctl config current-context", noArgs, currentContextRun), use}
}

// useContextRun makes opts.Name the current context, writing the config file in place.
func useContextRun(opts *ContextOptions) error {
	f := opts.src
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if _, _, err := cfg.ContextFor(opts.Name); err != nil {
		return err
	}
	path := f.configPath()
	doc, err := connect.ReadDoc(path)
	if err != nil {
		return err
	}
	connect.SetScalar(doc, "current-context", opts.Name)
	if err := connect.WriteDoc(path, doc); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Switched to context %q.\n", opts.Name)
	return nil
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s (see '%s --help')", cmd.Name(), what, cmd.CommandPath())
		}
		return nil
	}
}

func completeContextArgs(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	inner := completeContexts(f)
	return func(cmd *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 && cmd.Name() != "get-contexts" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return inner(cmd, args, s)
	}
}
