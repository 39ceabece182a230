package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

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
