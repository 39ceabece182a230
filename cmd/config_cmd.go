package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd/connect"
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

func (f *Factory) configPath() string {
	if p := f.flag("config"); p != "" {
		return p
	}
	return f.DefaultConfigPath()
}

type ContextOptions struct {
	Env
	Name string
}

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
		"  bucketctl config use-context prod", func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s needs a context name (see '%s --help')", cmd.Name(), cmd.CommandPath())
			}
			return nil
		}, useContextRun)
	use.ValidArgsFunction = completeContextArgs(f, false)
	return []*cobra.Command{verb("current-context", "Print the current context's name",
		"  bucketctl config current-context", noArgs, currentContextRun), use}
}

func useContextRun(opts *ContextOptions) error {
	f := opts.src
	cfg, err := f.configToWrite()
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
	connect.SetNode(doc, "current-context", connect.ScalarNode(opts.Name))
	if err := connect.WriteDoc(path, doc); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Switched to context %q.\n", opts.Name)
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
