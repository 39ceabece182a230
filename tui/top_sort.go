package tui

import (
	"cmp"
	"math"
	"sort"

	"github.com/bucketctl/bucketctl/tui/format"
)

// SortBy is the dashboard's row order.
type SortBy int

const (
	// SortFill puts the emptiest buckets (closest to denying) first.
	SortFill SortBy = iota
	// SortDeny puts the buckets denying most per second first.
	SortDeny
	// SortName orders by key.
	SortName
	// SortBusy puts the buckets deciding most per second (allowed and denied; tokens
	// consumed for layouts without counters) first.
	SortBusy
)

var sortCycle = map[SortBy]SortBy{SortFill: SortDeny, SortDeny: SortBusy, SortBusy: SortName, SortName: SortFill}

func (s SortBy) String() string {
	switch s {
	case SortDeny:
		return "deny/s ↓"
	case SortName:
		return "name"
	case SortBusy:
		return "busy ↓"
	}
	return "fill ↑"
}

// column is the title of the table column that shows the order's measure ("" for name).
func (s SortBy) column() string {
	switch s {
	case SortDeny:
		return "DENY/s"
	case SortBusy:
		return "ALLOW/s"
	case SortName:
		return ""
	}
	return "FILL"
}

// label names the order as the footer shows it, reversed or not.
func (s SortBy) label(reverse bool) string {
	if !reverse {
		return s.String()
	}
	switch s {
	case SortDeny:
		return "deny/s ↑ (reversed)"
	case SortName:
		return "name ↓ (reversed)"
	case SortBusy:
		return "busy ↑ (reversed)"
	}
	return "fill ↓ (reversed)"
}

func (r *topRow) denyRate() float64 {
	if !r.hasAct || !r.act.Counted {
		return -1
	}
	return r.act.Denied
}

// busyRate is decisions per second from the native counters, else tokens consumed per
// second; -1 when neither is known yet.
func (r *topRow) busyRate() float64 {
	switch {
	case !r.hasAct:
		return -1
	case r.act.Counted:
		return r.act.Allowed + r.act.Denied
	case r.act.ConsumedKnown:
		return r.act.Consumed
	}
	return -1
}

// unknownFill says the row has no fill to sort by: not a bucket, spec unknown, or gone.
func (r *topRow) unknownFill() bool {
	return r.state.Problem != "" || !r.state.HasSpec()
}

// fillShown is the fill as the table shows it, so rows that look the same keep their
// order (by key) from one refresh to the next.
func (r *topRow) fillShown() float64 {
	if r.unknownFill() {
		return 0
	}
	return format.TokensShown(r.state.Tokens) / r.state.Spec.Capacity
}

func (m *Top) setSort(s SortBy) {
	m.sortBy = s
	m.refilter()
}

func (m *Top) sortRows() {
	sort.SliceStable(m.visible, func(a, b int) bool {
		return m.less(&m.rows[m.visible[a]], &m.rows[m.visible[b]])
	})
}

// less orders two rows: hot ones first, by the sort's measure as shown and steadied
// (reversed when asked), rows without a fill after the others either way, then by the fill
// as shown (when sorted by fill), then by key.
func (m *Top) less(a, b *topRow) bool {
	if m.sortBy == SortName {
		if m.reverse {
			return a.state.Key > b.state.Key
		}
		return a.state.Key < b.state.Key
	}
	// Hot buckets first, busiest first, in every order but by name.
	if c := cmp.Compare(b.order.hot, a.order.hot); c != 0 {
		return c < 0
	}
	c := 0
	switch m.sortBy {
	case SortDeny:
		c = cmp.Compare(format.RateShown(b.order.deny), format.RateShown(a.order.deny))
	case SortBusy:
		c = cmp.Compare(format.RateShown(b.order.busy), format.RateShown(a.order.busy))
	}
	if m.reverse {
		c = -c
	}
	if c != 0 {
		return c < 0
	}
	if ua, ub := a.unknownFill(), b.unknownFill(); ua != ub {
		return ub
	}
	if m.sortBy != SortFill {
		// Rows alike in the order's rate keep the order of their keys: their fills move
		// every refresh, and would swap them.
		return a.state.Key < b.state.Key
	}
	if c = cmp.Compare(a.fillShown(), b.fillShown()); m.reverse {
		c = -c
	}
	if c != 0 {
		return c < 0
	}
	return a.state.Key < b.state.Key
}

// steadyOrder are a row's rates as the order uses them: hot writes, decisions and denials
// per second (-1: unknown).
type steadyOrder struct{ hot, busy, deny float64 }

// steadied is the row's order measures: this refresh's, except that a rate within its
// noise of was (nil for a new row) keeps was's value, so rows of jittery traffic do not
// swap every refresh.
func (r *topRow) steadied(was *steadyOrder) steadyOrder {
	now := steadyOrder{hot: r.hot, busy: r.busyRate(), deny: r.denyRate()}
	if was == nil {
		return now
	}
	return steadyOrder{hot: steady(was.hot, now.hot), busy: steady(was.busy, now.busy), deny: steady(was.deny, now.deny)}
}

// steady is now, or old when now is within old's noise: a third of it, and at least 2 a
// second. Becoming known, unknown, zero or non-zero always counts.
func steady(old, now float64) float64 {
	if (old < 0) != (now < 0) || (old == 0) != (now == 0) {
		return now
	}
	if math.Abs(now-old) <= max(2, old/3) {
		return old
	}
	return now
}
