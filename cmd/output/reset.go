package output

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// PrintResetPlan prints reset's plan (or what it did) on stdout in format.
func PrintResetPlan(io *iostreams.IOStreams, format string, plan []ResetView) error {
	if format != FormatTable {
		if format == FormatJSONL {
			s := NewStream(io, FormatJSONL)
			for _, v := range plan {
				_ = s.Add(v)
			}
			return s.Close()
		}
		return WriteData(io.Out, format, plan)
	}
	return PrintResetTable(io, io.Out, plan)
}

// PrintResetTable prints reset's plan as a table on w, and its notes on stderr.
func PrintResetTable(ios *iostreams.IOStreams, w io.Writer, plan []ResetView) error {
	to := *ios
	to.Out = w
	t := NewStream(&to, FormatTable, "KEY", "LAYOUT", "TOKENS", "ACTION", "AFTER")
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
	names := make([]string, 0, len(p.byLayout))
	for n := range p.byLayout {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
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
	if n := t.N[bucket.ResetCreated]; n > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s of them had no key and were created whole\n", count(n))
	}
	if n := t.N[bucket.ResetMissing]; n > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s bucket(s) had no key by then (they read as full): nothing to delete\n", count(n))
	}
	if n := t.N[bucket.ResetChanged]; n > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s key(s) changed since they were read and are no longer buckets: left untouched (%s)\n",
			count(n), strings.Join(t.First[bucket.ResetChanged], ", "))
	}
	if n := t.N[bucket.ResetCorrupt]; n > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s bucket(s) hold corrupt values (overflowing, negative or out of range): left untouched (%s)\n",
			count(n), strings.Join(t.First[bucket.ResetCorrupt], ", "))
	}
	if n := t.N[bucket.ResetUndeclared]; n > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s key(s) are bare numbers with no layout declared: left untouched; to reset one, %s\n",
			count(n), format.DeclareHint(""))
	}
}

func count(n int) string { return format.Count(int64(n)) }
