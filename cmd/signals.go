package cmd

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// catchSignals makes Ctrl-C and SIGTERM cancel cmd's context, so that it stops cleanly with
// exit 130; only in the process's Factory (f.Signals), and not for a quickKey command.
func (f *Factory) catchSignals(cmd *cobra.Command) {
	if !f.Signals || f.quick || f.signals != nil {
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

func (f *Factory) releaseSignals() {
	if f.stopSignals != nil {
		f.stopSignals()
	}
}
