package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/cmd/output"
)

type AuditOptions struct {
	Env
	Selection
	FailOn  string
	Depth   int
	Samples int
}

func NewCmdAudit(f *Factory, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{}
	cmd := &cobra.Command{
		Use:   "audit [--match PATTERN]",
		Short: "Report what is wrong with the buckets in this Redis: TTLs, clocks, corrupt values, slots, memory",
		Long:  commandHelp("audit") + findingsHelp() + commandHelp("audit-memory"),
		Example: `  bucketctl audit
  bucketctl audit --match 'api:*' -o json > audit.json
  bucketctl audit --fail-on error          # exit 5 when any bucket hands out wrong decisions`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := notNegative("--limit", opts.Limit, "no limit"); err != nil {
				return err
			}
			switch opts.FailOn {
			case "", "none", string(audit.Warning), string(audit.Error):
			default:
				return usagef("--fail-on %q: must be warning, error or none", opts.FailOn)
			}
			if opts.Depth < 0 || opts.Samples < 0 {
				return usagef("--depth and --samples must be >= 0")
			}
			return dispatch(cmd, f, opts, &opts.Env, &opts.Spec, runF, auditRun)
		},
	}
	cmd.Flags().StringVar(&opts.Match, "match", "*", "Redis glob pattern of the keys to audit")
	intVarP(cmd.Flags(), &opts.Limit, "limit", "n", 0, "stop after this many buckets (0 = no limit)")
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "none", "exit 5 when a finding is at or above this severity: warning, error or none")
	intVar(cmd.Flags(), &opts.Depth, "depth", 0, "':'-separated segments that name a key family (0 = all but the last)")
	intVar(cmd.Flags(), &opts.Samples, "samples", 5, "keys measured with MEMORY USAGE per family and per finding (0 = none: no memory estimates)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", fixedCompletions("warning", "error", "none"))
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func findingsHelp() string {
	var b strings.Builder
	for _, fi := range audit.Findings {
		fmt.Fprintf(&b, "  %-17s %-8s %s\n", fi.Kind, fi.Severity, fi.Meaning)
	}
	return b.String()
}

func auditRun(opts *AuditOptions) error {
	rd, err := opts.reading(&opts.Spec)
	if err != nil {
		return err
	}
	ctx, st, run := opts.Ctx, rd.st, rd.scan(opts.Match, opts.Limit, true)
	samples := opts.Samples
	if samples == 0 {
		samples = -1 // no MEMORY USAGE at all
	}
	aud := audit.New(audit.Options{Depth: opts.Depth, Samples: samples,
		MaxSamples: 200 * max(1, opts.Samples), Cluster: st.IsCluster()})
	if err := run.run(ctx, func(page []bucket.State) error { return aud.AddPage(ctx, st, page) }); err != nil {
		return err
	}
	rep := aud.Report()
	view := output.AuditOf(rep, run.stats, run.truncated)
	if output.IsData(opts.Output) {
		err = output.WriteData(opts.IO.Out, opts.Output, view)
	} else {
		err = output.PrintAudit(opts.IO, view)
	}
	if err != nil {
		return err
	}
	if rep.NoMemory != "" {
		fmt.Fprintf(opts.IO.ErrOut, "note: %s\n", rep.NoMemory)
	}
	if run.truncated {
		fmt.Fprintf(opts.IO.ErrOut, "note: stopped at --limit %d buckets: the audit covers part of the keyspace\n", opts.Limit)
	}
	if opts.FailOn == "none" || opts.FailOn == "" {
		return nil
	}
	n := 0 // finding kinds at or above --fail-on
	for _, fd := range rep.Findings {
		if fd.Severity.Rank() >= audit.Severity(opts.FailOn).Rank() {
			n++
		}
	}
	if n > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "bucketctl: audit: %d finding kind(s) at or above %s (exit %d)\n", n, opts.FailOn, ExitFindings)
		return &SilentError{Code: ExitFindings}
	}
	return nil
}
