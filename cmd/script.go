package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/scripts"
)

func NewCmdScript(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "script",
		Short: "Load the token-bucket script into Redis, or show it",
		Long: `bucketctl decides with one atomic Lua script run by EVALSHA (falling back to EVAL when a
server answers NOSCRIPT, e.g. after a restart or SCRIPT FLUSH). 'script load' loads it on every
master up front; 'script show' prints it, so it can be reviewed or loaded by other tools.`,
		Example: "  bucketctl script load\n  bucketctl script show > token_bucket.lua\n  bucketctl script show --sha",
		Args:    cobra.ArbitraryArgs,
		RunE:    helpOrUnknown,
	}
	cmd.AddCommand(NewCmdScriptLoad(f, nil), NewCmdScriptShow(f, nil))
	return cmd
}

type ScriptLoadOptions struct {
	Env
	Output string
}

func NewCmdScriptLoad(f *Factory, runF func(*ScriptLoadOptions) error) *cobra.Command {
	opts := &ScriptLoadOptions{}
	cmd := &cobra.Command{
		Use:     "load",
		Short:   "Load the script on every master (SCRIPT LOAD)",
		Example: "  bucketctl script load\n  bucketctl script load --cluster 10.0.0.1:6379 -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dispatch(cmd, f, opts, &opts.Env, nil, runF, scriptLoadRun)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func scriptLoadRun(opts *ScriptLoadOptions) error {
	st, err := opts.src.Store(opts.Ctx)
	if err != nil {
		return err
	}
	sha, nodes, err := st.LoadScript(opts.Ctx)
	if err != nil {
		return err
	}
	if opts.Output != output.FormatTable {
		return output.WriteData(opts.IO.Out, opts.Output, map[string]any{"sha": sha, "nodes": nodes})
	}
	t := output.NewTable(opts.IO, "NODE", "SHA")
	for _, n := range nodes {
		t.Add(n, sha)
	}
	return t.Render()
}

type ScriptShowOptions struct {
	Env
	SHAOnly bool
}

func NewCmdScriptShow(f *Factory, runF func(*ScriptShowOptions) error) *cobra.Command {
	opts := &ScriptShowOptions{}
	cmd := &cobra.Command{
		Use:     "show",
		Short:   "Print the script's Lua source (or its SHA1 with --sha)",
		Example: "  bucketctl script show\n  bucketctl script show --sha",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return dispatch(cmd, f, opts, &opts.Env, nil, runF, scriptShowRun)
		},
	}
	cmd.Flags().BoolVar(&opts.SHAOnly, "sha", false, "print only the SHA1 EVALSHA uses")
	return cmd
}

// scriptShowRun prints the native script, or its SHA1. It needs no server.
func scriptShowRun(opts *ScriptShowOptions) error {
	if opts.SHAOnly {
		_, err := fmt.Fprintln(opts.IO.Out, bucket.NewStore(nil).SHA())
		return err
	}
	_, err := fmt.Fprint(opts.IO.Out, scripts.TokenBucket())
	return err
}
