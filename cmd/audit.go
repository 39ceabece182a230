package cmd

import (
	"fmt"
	"github.com/bucketctl/bucketctl/cmd/output"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/tui/format"
)

// AuditOptions are the options of audit.
type AuditOptions struct {
	Env
	Match   string
	Limit   int
	FailOn  string
	Depth   int
	Samples int
	Spec    SpecFlags
	Output  string
}

// NewCmdAudit builds `audit`.
func NewCmdAudit(f *Factory, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{}
	cmd := &cobra.Command{
		Use:   "audit [--match PATTERN]",
		Short: "Report what is wrong with the buckets in this Redis: TTLs, clocks, corrupt values, slots, memory",
		Long: `Scan the keys matching --match on every master (SCAN, never KEYS; one page of keys in
memory at a time) and report, by kind, the buckets that are wrong: with a count, a few
example keys, the memory involved and how to fix it. Then the key families (prefix up to
the last ':' segment, or --depth segments) with their layouts and memory.

Findings, by severity (the README explains each):
` + findingsHelp() + `
Memory is estimated from MEMORY USAGE of a few sampled keys per family and per finding
(--samples), never of every key. A bucket's spec (capacity, rate) comes from the native
bucket itself, a rule or --capacity/--rate; without one, the TTL and capacity checks are
skipped for it.

Redis cost: list's (one SCAN and one pipelined read per page of about 500 keys) plus one
pipelined MEMORY USAGE round trip for a page with sampled keys.

--fail-on warning|error exits 5 when a finding is at or above that severity, so a CI job
or deploy can gate on it. Output: a table, or -o json|yaml (one document).`,
		Example: `  bucketctl audit
  bucketctl audit --match 'rate:*' -o json > audit.json
  bucketctl audit --fail-on error          # exit 5 when any bucket hands out wrong decisions`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Limit < 0 {
				return usagef("--limit %d: must be >= 0 (0 = no limit)", opts.Limit)
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
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 0, "stop after this many buckets (0 = no limit)")
	cmd.Flags().StringVar(&opts.FailOn, "fail-on", "none", "exit 5 when a finding is at or above this severity: warning, error or none")
	cmd.Flags().IntVar(&opts.Depth, "depth", 0, "':'-separated segments that name a key family (0 = all but the last)")
	cmd.Flags().IntVar(&opts.Samples, "samples", 5, "keys measured with MEMORY USAGE per family and per finding (0 = none: no memory estimates)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", fixedCompletions("warning", "error", "none"))
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output, output.FormatTable, output.FormatJSON, output.FormatYAML)
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
	rd, err := opts.reading(&opts.Spec, opts.Output, output.FormatTable, output.FormatJSON, output.FormatYAML)
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
	view := auditView(rep, run.stats, run.truncated)
	if output.IsData(opts.Output) {
		err = output.WriteData(opts.IO.Out, opts.Output, view)
	} else {
		err = printAudit(opts.IO, view)
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
	if opts.FailOn != "none" && opts.FailOn != "" {
		if n := failing(rep, audit.Severity(opts.FailOn)); n > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "bucketctl: audit: %d finding kind(s) at or above %s (exit %d)\n", n, opts.FailOn, ExitFindings)
			return &SilentError{Code: ExitFindings}
		}
	}
	return nil
}

// failing counts the finding kinds at or above sev.
func failing(r audit.Report, sev audit.Severity) int {
	n := 0
	for _, fd := range r.Findings {
		if fd.Severity.Rank() >= sev.Rank() {
			n++
		}
	}
	return n
}

// AuditView is the JSON/YAML document of audit. Field names are stable; memory in bytes.
type AuditView struct {
	Findings []FindingView `json:"findings" yaml:"findings"`
	Families []FamilyView  `json:"families" yaml:"families"`
	// Worst is the highest severity found ("" when nothing was found).
	Worst         string `json:"worst" yaml:"worst"`
	KeysScanned   int64  `json:"keys_scanned" yaml:"keys_scanned"`
	Buckets       int64  `json:"buckets" yaml:"buckets"`
	OtherKeys     int64  `json:"other_keys" yaml:"other_keys"`
	MemorySamples int    `json:"memory_samples" yaml:"memory_samples"`
	// MemoryNote says why memory was not estimated (an ACL without MEMORY).
	MemoryNote string `json:"memory_note,omitempty" yaml:"memory_note,omitempty"`
	Commands   int64  `json:"commands" yaml:"commands"`
	RoundTrips int64  `json:"round_trips" yaml:"round_trips"`
	Truncated  bool   `json:"truncated" yaml:"truncated"`
}

// FindingView is one kind of finding.
type FindingView struct {
	Kind        string   `json:"kind" yaml:"kind"`
	Severity    string   `json:"severity" yaml:"severity"`
	Count       int64    `json:"count" yaml:"count"`
	Examples    []string `json:"examples" yaml:"examples"`
	MemoryBytes int64    `json:"memory_bytes" yaml:"memory_bytes"`
	MaxAheadMS  *float64 `json:"max_ahead_ms,omitempty" yaml:"max_ahead_ms,omitempty"`
	Detail      string   `json:"detail,omitempty" yaml:"detail,omitempty"`
	Meaning     string   `json:"meaning" yaml:"meaning"`
	Fix         string   `json:"fix" yaml:"fix"`
}

// FamilyView is one key family.
type FamilyView struct {
	Prefix      string           `json:"prefix" yaml:"prefix"`
	Keys        int64            `json:"keys" yaml:"keys"`
	Buckets     int64            `json:"buckets" yaml:"buckets"`
	Layouts     map[string]int64 `json:"layouts" yaml:"layouts"`
	MemoryBytes int64            `json:"memory_bytes" yaml:"memory_bytes"`
}

func auditView(r audit.Report, s bucket.ScanStats, truncated bool) AuditView {
	v := AuditView{Findings: []FindingView{}, Families: []FamilyView{}, Worst: string(r.Worst()),
		KeysScanned: s.Keys, Buckets: s.Buckets, OtherKeys: s.Other, MemorySamples: r.Samples, MemoryNote: r.NoMemory,
		Commands: s.Commands, RoundTrips: s.RoundTrips, Truncated: truncated}
	for _, fd := range r.Findings {
		fv := FindingView{Kind: string(fd.Kind), Severity: string(fd.Severity), Count: fd.Count,
			Examples: fd.Examples, MemoryBytes: fd.Memory, Detail: fd.Detail, Meaning: fd.Meaning, Fix: fd.Fix}
		if fd.Kind == audit.FindingClockAhead || fd.Kind == audit.FindingGCRADebt {
			a := format.JSONMS(fd.MaxAhead)
			fv.MaxAheadMS = &a
		}
		v.Findings = append(v.Findings, fv)
	}
	for _, fm := range r.Families {
		v.Families = append(v.Families, FamilyView{Prefix: fm.Prefix, Keys: fm.Keys, Buckets: fm.Buckets,
			Layouts: fm.Layouts, MemoryBytes: fm.Memory})
	}
	return v
}

// auditFamilyRows is how many families the table shows (the largest by memory).
const auditFamilyRows = 20

func printAudit(io *IOStreams, v AuditView) error {
	w := io.Out
	fmt.Fprintf(w, "scanned %s: %s, %s; memory from %s\n\n", format.Plural(int(v.KeysScanned), "key"),
		format.Plural(int(v.Buckets), "bucket"), format.Plural(int(v.OtherKeys), "other key"), format.Plural(v.MemorySamples, "sampled key"))
	if len(v.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
	} else {
		t := output.NewTable(io, "SEVERITY", "FINDING", "COUNT", "MEMORY", "EXAMPLES")
		for _, fd := range v.Findings {
			ex := make([]string, len(fd.Examples))
			for i, k := range fd.Examples {
				ex[i] = safe(k)
			}
			t.Add(fd.Severity, fd.Kind, format.Count(fd.Count), format.Bytes(fd.MemoryBytes), strings.Join(ex, " "))
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, fd := range v.Findings {
			fmt.Fprintf(w, "%s: %s\n", fd.Kind, fd.Meaning)
			switch {
			case fd.MaxAheadMS != nil && fd.Kind == string(audit.FindingGCRADebt):
				fmt.Fprintf(w, "  up to %s past a full window\n", format.Duration(durMS(*fd.MaxAheadMS)))
			case fd.MaxAheadMS != nil:
				fmt.Fprintf(w, "  up to %s ahead of the server's clock\n", format.Duration(durMS(*fd.MaxAheadMS)))
			}
			if fd.Detail != "" {
				fmt.Fprintf(w, "  %s\n", safe(fd.Detail))
			}
			fmt.Fprintf(w, "  fix: %s\n", fd.Fix)
		}
	}
	if len(v.Families) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := output.NewTable(io, "FAMILY", "KEYS", "BUCKETS", "LAYOUTS", "MEMORY")
	for i, fm := range v.Families {
		if i == auditFamilyRows {
			fmt.Fprintf(w, "(%d more families: -o json lists all)\n", len(v.Families)-i)
			break
		}
		p := fm.Prefix
		if p == "" {
			p = "(no prefix)"
		}
		t.Add(safe(p), format.Count(fm.Keys), format.Count(fm.Buckets), layoutList(fm.Layouts), format.Bytes(fm.MemoryBytes))
	}
	return t.Render()
}

func layoutList(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}

func durMS(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
