package tui

import (
	"cmp"
	"math"

	"github.com/bucketctl/bucketctl/tui/format"
)

// SortBy is the dashboard's row order: the emptiest buckets first, the most denying, by
// key, or the busiest (decisions per second, else tokens consumed).
type SortBy int

// The orders, as the keys 1-4 choose them.
const (
	SortFill SortBy = iota
	SortDeny
	SortName
	SortBusy
)

var sortCycle = map[SortBy]SortBy{SortFill: SortDeny, SortDeny: SortBusy, SortBusy: SortName, SortName: SortFill}

// sortNames are each order's name, reversed name and column title ("" for name).
var sortNames = [...][3]string{
	SortFill: {"fill ↑", "fill ↓ (reversed)", "FILL"},
	SortDeny: {"deny/s ↓", "deny/s ↑ (reversed)", "DENY/s"},
	SortName: {"name", "name ↓ (reversed)", ""},
	SortBusy: {"busy ↓", "busy ↑ (reversed)", "ALLOW/s"},
}

func (s SortBy) column() string { return sortNames[s][2] }

func (s SortBy) label(reverse bool) string {
	if reverse {
		return sortNames[s][1]
	}
	return sortNames[s][0]
}

func (r *topRow) unknownFill() bool { return r.state.Problem != "" || !r.state.HasSpec() }

// fillShown is the fill as shown, so rows that look the same keep their order by key.
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

// less orders two rows: hot ones first, then by the sort's steadied measure as shown, rows
// without a fill last, then by fill (sorted by fill), then by key.
func (m *Top) less(a, b *topRow) bool {
	if m.sortBy == SortName {
		if m.reverse {
			return a.state.Key > b.state.Key
		}
		return a.state.Key < b.state.Key
	}
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
	if ua, ub := a.unknownFill(), b.unknownFill(); c == 0 && ua != ub {
		return ub
	}
	if c == 0 && m.sortBy == SortFill {
		c = cmp.Compare(a.fillShown(), b.fillShown())
	}
	if m.reverse {
		c = -c
	}
	if c != 0 {
		return c < 0
	}
	return a.state.Key < b.state.Key
}

// steadyOrder are the rates the order uses: hot writes, decisions, denials (-1: unknown).
type steadyOrder struct{ hot, busy, deny float64 }

// steadied is this refresh's measures, each kept at was's value while within its noise, so
// rows of jittery traffic do not swap every refresh (was nil: a new row).
func (r *topRow) steadied(was *steadyOrder) steadyOrder {
	now := steadyOrder{hot: r.hot, busy: -1, deny: -1}
	switch {
	case r.hasAct && r.act.Counted:
		now.busy, now.deny = r.act.Allowed+r.act.Denied, r.act.Denied
	case r.hasAct && r.act.ConsumedKnown:
		now.busy = r.act.Consumed
	}
	if was == nil {
		return now
	}
	return steadyOrder{hot: steady(was.hot, now.hot), busy: steady(was.busy, now.busy), deny: steady(was.deny, now.deny)}
}

// steady keeps old while now is within its noise (a third, at least 2/s); a change between
// unknown, zero and non-zero always counts.
func steady(old, now float64) float64 {
	if (old < 0) != (now < 0) || (old == 0) != (now == 0) {
		return now
	}
	if math.Abs(now-old) <= max(2, old/3) {
		return old
	}
	return now
}
