package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

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
	return output.WriteNode(opts.IO.Out, doc)
}

// GetContextsOptions are `config get-contexts`'s: Names are the contexts to list (none: all).
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
		ValidArgsFunction: completeContextArgs(f, true),
	}
	addOutputFlag(cmd, &opts.Output, output.FormatTable, output.FormatJSON, output.FormatYAML, "name")
	return cmd
}

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
