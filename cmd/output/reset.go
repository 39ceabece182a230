package output

import (
	"fmt"
	"io"
	"sort"
	"strings"

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

func count(n int) string { return format.Count(int64(n)) }
