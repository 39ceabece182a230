package output

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// ResetHeader is the header of reset's table.
var ResetHeader = []string{"KEY", "LAYOUT", "TOKENS", "ACTION", "AFTER"}

// PrintResetPlan prints reset's plan (or what it did) on stdout in format.
func PrintResetPlan(io *iostreams.IOStreams, format string, plan []ResetView) error {
	switch format {
	case FormatTable:
		return PrintResetTable(io, io.Out, plan)
	case FormatJSONL:
		s := NewStream(io, FormatJSONL)
		for _, v := range plan {
			_ = s.Add(v)
		}
		return s.Close()
	}
	return WriteData(io.Out, format, plan)
}

// PrintResetTable prints reset's plan as a table on w, and its notes on stderr.
func PrintResetTable(ios *iostreams.IOStreams, w io.Writer, plan []ResetView) error {
	to := *ios
	to.Out = w
	t := NewStream(&to, FormatTable, ResetHeader...)
	for _, v := range plan {
		_ = t.Add(nil, ResetRow(v)...)
	}
	if err := t.Close(); err != nil {
		return err
	}
	for _, v := range plan {
		if v.Note != "" {
			fmt.Fprintf(ios.ErrOut, "note: %s: %s\n", format.SafeKey(v.Key), v.Note)
		}
	}
	return nil
}

// PlanSummary is a bulk reset's plan: counts per layout and the first keys.
type PlanSummary struct {
	Total    int
	byLayout map[string]int
	first    []string
}

// Add counts v in the plan.
func (p *PlanSummary) Add(v ResetView) {
	if p.byLayout == nil {
		p.byLayout = map[string]int{}
	}
	p.Total++
	p.byLayout[v.Layout]++
	if len(p.first) < 5 {
		p.first = append(p.first, format.SafeKey(v.Key))
	}
}

func (p *PlanSummary) String() string {
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(p.byLayout)) {
		fmt.Fprintf(&b, "  %-12s %s bucket(s)\n", n, count(p.byLayout[n]))
	}
	if len(p.first) > 0 {
		more := ""
		if p.Total > len(p.first) {
			more = fmt.Sprintf(", … (%s more)", count(p.Total-len(p.first)))
		}
		fmt.Fprintf(&b, "  first: %s%s\n", strings.Join(p.first, ", "), more)
	}
	fmt.Fprintf(&b, "  total: %s bucket(s)\n", count(p.Total))
	return b.String()
}

// ResetTally counts what resets did: per outcome, with its first five keys, and per layout.
type ResetTally struct {
	N        map[bucket.ResetOutcome]int
	First    map[bucket.ResetOutcome][]string
	ByLayout map[string]int
	Errs     []error
}

// Add counts the outcome o of op.
func (t *ResetTally) Add(op bucket.ResetOp, o bucket.ResetOutcome) {
	if t.N == nil {
		t.N, t.First, t.ByLayout = map[bucket.ResetOutcome]int{}, map[bucket.ResetOutcome][]string{}, map[string]int{}
	}
	t.N[o]++
	if len(t.First[o]) < 5 {
		t.First[o] = append(t.First[o], op.Key)
	}
	if o.Applied() {
		t.ByLayout[op.Layout.Name]++
	}
}

// Reset is how many buckets were reset (or created whole).
func (t *ResetTally) Reset() int { return t.N[bucket.ResetDone] + t.N[bucket.ResetCreated] }

// Report says on stderr what the resets did.
func (t *ResetTally) Report(io *iostreams.IOStreams) {
	var parts []string
	for n, c := range t.ByLayout {
		parts = append(parts, fmt.Sprintf("%s %s", n, count(c)))
	}
	sort.Strings(parts)
	layouts := ""
	if len(parts) > 0 {
		layouts = " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(io.ErrOut, "reset %s bucket(s)%s\n", count(t.Reset()), layouts)
	for _, n := range []struct {
		o    bucket.ResetOutcome
		text string
	}{
		{bucket.ResetCreated, "of them had no key and were created whole"},
		{bucket.ResetMissing, "bucket(s) had no key by then (they read as full): nothing to delete"},
		{bucket.ResetChanged, "key(s) changed since they were read and are no longer buckets: left untouched (" + strings.Join(t.First[bucket.ResetChanged], ", ") + ")"},
		{bucket.ResetCorrupt, "bucket(s) hold corrupt values (overflowing, negative or out of range): left untouched (" + strings.Join(t.First[bucket.ResetCorrupt], ", ") + ")"},
		{bucket.ResetUndeclared, "key(s) are bare numbers with no layout declared: left untouched; to reset one, " + format.DeclareHint("")},
	} {
		if c := t.N[n.o]; c > 0 {
			fmt.Fprintf(io.ErrOut, "note: %s %s\n", count(c), n.text)
		}
	}
}

func count(n int) string { return format.Count(int64(n)) }
