package cmd

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// listOrders are list --sort-by's orders.
var listOrders = []string{"fill", "tokens", "name", "ttl", "deny"}

// maxSorted is the most rows list --sort-by holds without --limit, about 1 KiB each.
var maxSorted = 100_000

// listLess orders rows for --sort-by, reverse turning the measure around. Rows without
// the measure come after the others, keys that are not buckets last; ties go by key.
func listLess(by string, reverse bool) func(a, b bucket.State) int {
	return func(a, b bucket.State) int {
		if pa, pb := a.Problem != "", b.Problem != ""; pa != pb {
			return boolCmp(pa, pb)
		}
		if by == "name" {
			if reverse {
				return strings.Compare(b.Key, a.Key)
			}
			return strings.Compare(a.Key, b.Key)
		}
		va, ka := listMeasure(by, a)
		vb, kb := listMeasure(by, b)
		if ka != kb {
			return boolCmp(!ka, !kb)
		}
		c := compareFloat(va, vb)
		if reverse {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	}
}

// listMeasure is s's value in order by (ascending), and whether it is known.
func listMeasure(by string, s bucket.State) (float64, bool) {
	switch by {
	case "fill": // as shown, so rows that read alike keep the order of their keys
		return format.TokensShown(s.Tokens) / max(s.Spec.Capacity, 1e-300), s.HasSpec()
	case "tokens":
		return format.TokensShown(s.Tokens), s.HasSpec()
	case "ttl":
		return float64(s.TTL), s.TTL >= 0
	case "deny":
		return -float64(s.Denied), s.Layout.Native
	}
	return 0, true
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// boolCmp orders false before true.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// sortedRows keeps the first limit rows of an order as they arrive (a heap whose top is
// the last row kept), or every row up to maxSorted when limit is 0.
type sortedRows struct {
	cmp   func(a, b bucket.State) int
	limit int
	rows  []bucket.State
	seen  int
}

func (h *sortedRows) Len() int           { return len(h.rows) }
func (h *sortedRows) Less(i, j int) bool { return h.cmp(h.rows[i], h.rows[j]) > 0 }
func (h *sortedRows) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *sortedRows) Push(x any)         { h.rows = append(h.rows, x.(bucket.State)) }
func (h *sortedRows) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

// add takes a page of rows; false when it holds maxSorted rows and there are more.
func (h *sortedRows) add(page []bucket.State) bool {
	for _, s := range page {
		h.seen++
		switch {
		case h.limit == 0 && len(h.rows) >= maxSorted:
			return false
		case h.limit == 0 || len(h.rows) < h.limit:
			heap.Push(h, s)
		case h.cmp(s, h.rows[0]) < 0:
			h.rows[0] = s
			heap.Fix(h, 0)
		}
	}
	return true
}

// sorted is the rows kept, in order.
func (h *sortedRows) sorted() []bucket.State {
	out := slices.Clone(h.rows)
	slices.SortFunc(out, h.cmp)
	return out
}
