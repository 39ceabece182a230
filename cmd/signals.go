package cmd

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// quick says whether cmd is one of the commands that make a single round trip and change
// at most what one atomic script changes: Ctrl-C may end them at once, as it ends
// redis-cli, with nothing half-done. They skip setting up signal handling, which costs
// each run's start-up about 0.7 ms (a goroutine, a thread and the handlers).
func quick(cmd *cobra.Command) bool {
	switch cmd.Name() {
	case "version", "check", "consume":
		return true
	case "inspect":
		return !cmd.Flags().Changed("match")
	}
	return false
}

// catchSignals makes Ctrl-C (SIGINT) and SIGTERM cancel the context of a command that is
// not quick, so that it stops cleanly: after the batch in flight, with its views closed
// and its sandbox stopped, and exit 130. Only the process's Factory catches signals
// (f.Signals); tests cancel the context they give Run.
func (f *Factory) catchSignals(cmd *cobra.Command) {
	if !f.Signals || quick(cmd) || f.signals != nil {
		return
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	cmd.SetContext(ctx)
	f.signals, f.stopSignals = ctx, stop
}

// interrupted says whether a signal caught by catchSignals cancelled the command.
func (f *Factory) interrupted() bool {
	return f.signals != nil && f.signals.Err() != nil
}

// releaseSignals gives Ctrl-C and SIGTERM back their default action.
func (f *Factory) releaseSignals() {
	if f.stopSignals != nil {
		f.stopSignals()
	}
}
