package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/cmd/output"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Env is what a command's run reads besides its flags (the fields cli/cli's Options
// carry): the streams, the context (Ctrl-C, --timeout), the clock, the environment, and
// src, where the config, the server and the Store come from, lazily (a run that fails on
// its flags never dials). RunE fills it in; a test builds it with Factory.env and calls
// the run without cobra.
type Env struct {
	IO     *IOStreams
	Ctx    context.Context
	Now    func() time.Time
	Getenv func(string) string
	src    *Factory
}

// env is the Env of a command run over f, with ctx (nil: context.Background()).
func (f *Factory) env(ctx context.Context) Env {
	if ctx == nil {
		ctx = context.Background()
	}
	return Env{IO: f.IO, Ctx: ctx, Now: f.Now, Getenv: f.getenv, src: f}
}

// envOf is the Env of cmd's run over f: its context is cmd's.
func (f *Factory) cmdEnv(cmd *cobra.Command) Env { return f.env(cmd.Context()) }

// dispatch ends a command's RunE once its flags are checked: the Env and the spec flags
// given are filled in, then runF runs (a test's, to see the parsed options) or else run.
func dispatch[O any](cmd *cobra.Command, f *Factory, opts *O, env *Env, spec *SpecFlags, runF, run func(*O) error) error {
	*env = f.cmdEnv(cmd)
	if spec != nil {
		spec.given(cmd)
	}
	if runF != nil {
		return runF(opts)
	}
	return run(opts)
}

// IOStreams is where a command reads and writes (see package iostreams).
type IOStreams = iostreams.IOStreams

// stateNodes returns the function naming the node of a key when the output format shows
// nodes (wide, JSON, YAML), and nil for the plain table.
func stateNodes(ctx context.Context, f *Factory, format string) (func(string) string, error) {
	if format == output.FormatTable {
		return nil, nil
	}
	return f.nodeOf(ctx)
}

// safe escapes a key name or a message holding one for a person's terminal.
func safe(s string) string { return format.SafeKey(s) }

// confirm asks question on the terminal: yes goes on; anything else cancels, and nothing
// changed (exit 1).
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

// Selection are the options of the commands that read many buckets: which keys (--match,
// at most --limit buckets), what they are (the spec flags) and how they print (-o).
type Selection struct {
	Match  string
	Limit  int
	Spec   SpecFlags
	Output string
}
