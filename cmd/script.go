package cmd

import (
	"fmt"
	"github.com/bucketctl/bucketctl/cmd/output"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/scripts"
)

// NewCmdScript groups `script load` and `script show`.
func NewCmdScript(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "script",
		Short: "Load the token-bucket script into Redis, or show it",
		Long: `bucketctl decides with one atomic Lua script run by EVALSHA (falling back to EVAL when a
server answers NOSCRIPT, e.g. after a restart or SCRIPT FLUSH). 'script load' loads it on every
master up front; 'script show' prints it, so it can be reviewed or loaded by other tools.`,
		Example: "  bucketctl script load\n  bucketctl script show > token_bucket.lua\n  bucketctl script show --sha",
		Args:    cobra.ArbitraryArgs,
		RunE:    groupRun,
	}
	var outFormat string
	load := &cobra.Command{
		Use:     "load",
		Short:   "Load the script on every master (SCRIPT LOAD)",
		Example: "  bucketctl script load\n  bucketctl script load --cluster 10.0.0.1:6379 -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(outFormat); err != nil {
				return err
			}
			st, err := f.Store(cmd.Context())
			if err != nil {
				return err
			}
			sha, nodes, err := st.LoadScript(cmd.Context())
			if err != nil {
				return err
			}
			if outFormat != output.FormatTable {
				return output.WriteData(f.IO.Out, outFormat, map[string]any{"sha": sha, "nodes": nodes})
			}
			t := output.NewTable(f.IO, "NODE", "SHA")
			for _, n := range nodes {
				t.Add(n, sha)
			}
			return t.Render()
		},
	}
	addOutputFlag(load, &outFormat)
	var shaOnly bool
	show := &cobra.Command{
		Use:     "show",
		Short:   "Print the script's Lua source (or its SHA1 with --sha)",
		Example: "  bucketctl script show\n  bucketctl script show --sha",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if shaOnly {
				_, err := fmt.Fprintln(f.IO.Out, bucket.NewStore(nil).SHA())
				return err
			}
			_, err := fmt.Fprint(f.IO.Out, scripts.TokenBucket())
			return err
		},
	}
	show.Flags().BoolVar(&shaOnly, "sha", false, "print only the SHA1 EVALSHA uses")
	cmd.AddCommand(load, show)
	return cmd
}
