package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// newCmdRootOnly builds the root command with its persistent flags and no subcommands.
func newCmdRootOnly(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "bucketctl",
		Short: "Inspect, reset, watch and load-test token-bucket rate limiters in Redis",
		Long: `bucketctl operates token-bucket rate limiters that live in Redis: its own atomic Lua
bucket and the buckets other applications write (see 'bucketctl inspect --help' for layouts).

Connect with --url, --cluster or Sentinel flags, or a named context in the config file
(` + f.DefaultConfigPath() + `). The password is read from REDISCLI_AUTH or
BUCKETCTL_PASSWORD (or the context's password-env), never from the command line.
Every global flag below can also be set as BUCKETCTL_<FLAG> (dashes as underscores); flags win.

Reference, also as man pages: 'bucketctl help environment' (connecting), 'bucketctl help
exit-codes', 'bucketctl help formats'; the list of topics is at the end of this help.`,
		Example: `  go run . demo                                    # sandbox Redis with live traffic
  bucketctl consume rate:user:42 --capacity 10 --rate 5
  bucketctl inspect rate:user:42 -o json
  bucketctl list --match 'rate:user:*'
  bucketctl reset --match 'rate:user:*' --dry-run`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.bindEnv(); err != nil {
				return err
			}
			// An empty pattern matches no key: a typo (an unset shell variable), not a request.
			if fl := cmd.Flags().Lookup("match"); fl != nil && fl.Changed && fl.Value.String() == "" {
				return usagef("--match '': an empty pattern matches no key; give a Redis glob pattern ('*' for every key)")
			}
			if noColor, _ := f.Flags.GetBool("no-color"); noColor {
				f.IO.NoColor = true
			}
			if c := f.flag("clock"); c != "server" && c != "client" {
				return usagef("--clock %q: must be server (Redis TIME) or client", c)
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	f.Flags = pf
	connect.AddFlags(pf, f.DefaultConfigPath(), durationFlag)
	pf.String("clock", "server", "time source for decisions: server (Redis TIME) or client (this machine, for servers that reject TIME in scripts)")
	pf.Bool("no-color", false, "no colours (also NO_COLOR=1)")
	_ = root.RegisterFlagCompletionFunc("context", completeContexts(f))
	_ = root.RegisterFlagCompletionFunc("clock", fixedCompletions("server", "client"))

	root.SetFlagErrorFunc(flagError)
	root.SetUsageTemplate(topicUsage(root.UsageTemplate()))
	root.Version = f.Version.Version
	root.SetVersionTemplate(f.Version.line() + "\n")
	return root
}

func NewCmdRoot(f *Factory) *cobra.Command { return newCmdRootFor(f, nil) }

// commands are the root's subcommands and help topics in the order help lists them.
func commands() []subcommand {
	cs := []subcommand{
		{"script", NewCmdScript},
		{"config", NewCmdConfig},
		{"check", func(f *Factory) *cobra.Command { return NewCmdCheck(f, nil) }},
		{"consume", func(f *Factory) *cobra.Command { return NewCmdConsume(f, nil) }},
		{"inspect", func(f *Factory) *cobra.Command { return NewCmdInspect(f, nil) }},
		{"list", func(f *Factory) *cobra.Command { return NewCmdList(f, nil) }},
		{"audit", func(f *Factory) *cobra.Command { return NewCmdAudit(f, nil) }},
		{"reset", func(f *Factory) *cobra.Command { return NewCmdReset(f, nil) }},
		{"watch", func(f *Factory) *cobra.Command { return NewCmdWatch(f, nil) }},
		{"top", func(f *Factory) *cobra.Command { return NewCmdTop(f, nil) }},
		{"load", func(f *Factory) *cobra.Command { return NewCmdLoad(f, nil) }},
		{"demo", func(f *Factory) *cobra.Command { return NewCmdDemo(f, nil) }},
		{"version", NewCmdVersion},
		{"completion", NewCmdCompletion},
	}
	for _, t := range helpTopics {
		cs = append(cs, subcommand{t.name, func(*Factory) *cobra.Command { return newCmdTopic(t.name, t.short) }})
	}
	return cs
}

type subcommand struct {
	name  string
	build func(*Factory) *cobra.Command
}

// newCmdRootFor builds the root and the one command args name (found among stand-ins), or
// the whole tree when they name none (root help, an unknown word, help, completion).
func newCmdRootFor(f *Factory, args []string) *cobra.Command {
	root := newCmdRootOnly(f)
	for _, c := range commands() {
		root.AddCommand(&cobra.Command{Use: c.name})
	}
	found, _, err := root.Find(args)
	name := ""
	if err == nil && found != root {
		name = found.Name()
	}
	all := name == "" || name == "completion" // completion generates for the whole tree
	root.ResetCommands()
	for _, c := range commands() {
		if all || c.name == name {
			root.AddCommand(c.build(f))
		}
	}
	return root
}

// Main runs bucketctl and returns the exit code.
func Main() int {
	connect.QuietLogs()
	if os.Getenv("GOGC") == "" {
		// Every command's live heap is bounded (pages, top's watchlist, load's histograms):
		// a quarter of the default's GC work for a peak up to 2.5 times (list of 1M: 34 MB).
		debug.SetGCPercent(400)
	}
	f := NewFactory(iostreams.System(), buildVersion())
	f.Signals = true
	return Run(context.Background(), f, os.Args[1:])
}

// Run executes args against f and returns the exit code; an error is one line on stderr.
func Run(ctx context.Context, f *Factory, args []string) int {
	root := newCmdRootFor(f, args)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	f.Close()
	f.releaseSignals()
	if err == nil {
		return ExitOK
	}
	err = withSplitHint(cobraUsage(root, err), args)
	if (ctx.Err() != nil || f.interrupted()) && errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	var se *SilentError
	var de *DeniedError
	if !errors.As(err, &se) && !errors.As(err, &de) {
		fmt.Fprintln(f.IO.ErrOut, "bucketctl: "+f.errText(err))
	}
	return ExitCode(err)
}

// addOutputFlag defines -o, --output: one of formats (default table, json, yaml), the first the default.
func addOutputFlag(cmd *cobra.Command, p *string, formats ...string) {
	if len(formats) == 0 {
		formats = []string{output.FormatTable, output.FormatJSON, output.FormatYAML}
	}
	*p = formats[0]
	cmd.Flags().VarP(oneOf(p, formats), "output", "o", "output format: "+strings.Join(formats, "|"))
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(formats...))
}

func fixedCompletions(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
