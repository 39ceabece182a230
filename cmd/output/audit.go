package output

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket/audit"
	"github.com/bucketctl/bucketctl/bucket/scan"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// AuditView is the JSON/YAML document of audit. Field names are stable; memory in bytes.
type AuditView struct {
	Findings      []FindingView `json:"findings"`
	Families      []FamilyView  `json:"families"`
	Worst         string        `json:"worst"`
	KeysScanned   int64         `json:"keys_scanned"`
	Buckets       int64         `json:"buckets"`
	OtherKeys     int64         `json:"other_keys"`
	MemorySamples int           `json:"memory_samples"`
	// MemoryNote says why memory was not estimated (an ACL without MEMORY).
	MemoryNote string `json:"memory_note,omitempty"`
	Commands   int64  `json:"commands"`
	RoundTrips int64  `json:"round_trips"`
	Truncated  bool   `json:"truncated"`
}

type FindingView struct {
	Kind        string   `json:"kind"`
	Severity    string   `json:"severity"`
	Count       int64    `json:"count"`
	Examples    []string `json:"examples"`
	MemoryBytes int64    `json:"memory_bytes"`
	MaxAheadMS  *float64 `json:"max_ahead_ms,omitempty"`
	Detail      string   `json:"detail,omitempty"`
	Meaning     string   `json:"meaning"`
	Fix         string   `json:"fix"`
}

type FamilyView struct {
	Prefix      string           `json:"prefix"`
	Keys        int64            `json:"keys"`
	Buckets     int64            `json:"buckets"`
	Layouts     map[string]int64 `json:"layouts"`
	MemoryBytes int64            `json:"memory_bytes"`
}

func AuditOf(r audit.Report, s scan.Stats, truncated bool) AuditView {
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

func PrintAudit(io *iostreams.IOStreams, v AuditView) error {
	w := io.Out
	fmt.Fprintf(w, "scanned %s: %s, %s; memory from %s\n\n", format.Plural(int(v.KeysScanned), "key"),
		format.Plural(int(v.Buckets), "bucket"), format.Plural(int(v.OtherKeys), "other key"), format.Plural(v.MemorySamples, "sampled key"))
	if len(v.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
	} else {
		t := NewTable(io, "SEVERITY", "FINDING", "COUNT", "MEMORY", "EXAMPLES")
		for _, fd := range v.Findings {
			ex := make([]string, len(fd.Examples))
			for i, k := range fd.Examples {
				ex[i] = format.SafeKey(k)
			}
			t.Add(fd.Severity, fd.Kind, format.Count(fd.Count), format.Bytes(fd.MemoryBytes), strings.Join(ex, " "))
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		for _, fd := range v.Findings {
			fmt.Fprintf(w, "%s: %s\n", fd.Kind, fd.Meaning)
			if fd.MaxAheadMS != nil {
				largest := format.Ahead
				if fd.Kind == string(audit.FindingGCRADebt) {
					largest = format.Debt
				}
				fmt.Fprintf(w, "  largest: %s\n", largest(time.Duration(*fd.MaxAheadMS*float64(time.Millisecond))))
			}
			if fd.Detail != "" {
				fmt.Fprintf(w, "  %s\n", format.SafeKey(fd.Detail))
			}
			fmt.Fprintf(w, "  fix: %s\n", fd.Fix)
		}
	}
	if len(v.Families) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	t := NewTable(io, "FAMILY", "KEYS", "BUCKETS", "LAYOUTS", "MEMORY")
	for i, fm := range v.Families {
		if i == auditFamilyRows {
			fmt.Fprintf(w, "(%d more families: -o json lists all)\n", len(v.Families)-i)
			break
		}
		p := fm.Prefix
		if p == "" {
			p = "(no prefix)"
		}
		t.Add(format.SafeKey(p), format.Count(fm.Keys), format.Count(fm.Buckets), layoutList(fm.Layouts), format.Bytes(fm.MemoryBytes))
	}
	return t.Render()
}

func layoutList(m map[string]int64) string {
	names := slices.Sorted(maps.Keys(m))
	for i, n := range names {
		names[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, ", ")
}
