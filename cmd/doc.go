// Package cmd is bucketctl's command line: one file per command, each an Options struct,
// NewCmdX(f, runF) and xRun(opts) (as in cli/cli). Commands parse flags into Options and
// print; what a bucket is and how it is read, reset or load-tested lives in bucket and its
// sub-packages, the server and config in cmd/connect, the output formats in cmd/output,
// the live views in tui.
package cmd
