package output

import (
	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/tui/format"
)

// InspectHeader is the inspect table's header.
var InspectHeader = []string{"KEY", "LAYOUT", "TOKENS", "CAPACITY", "RATE", "FILL", "FULL-IN", "TTL", "UPDATED", "ALLOWED", "DENIED"}

// InspectRow is one row of the inspect table.
func InspectRow(s bucket.State, node func(string) string) []string {
	var cells []string
	if s.Problem != "" {
		cells = []string{format.SafeKey(s.Key), "-", "-", "-", "-", "-", "-", format.TTL(s.TTL), "-", "-", "-"}
	} else {
		tokens, capacity, rate, fill, full := levelCells(s)
		if !s.Exists {
			tokens, fill, full = "no such key", "-", "-"
		}
		updated := "-"
		if s.Exists && s.TAT == nil { // a GCRA bucket stores no time of its last update
			updated = format.Ago(s.Age())
		}
		cells = []string{format.SafeKey(s.Key), LayoutLabel(s), tokens, capacity, rate, fill, full, format.TTL(s.TTL), updated,
			format.Count(s.Allowed), format.Count(s.Denied)}
	}
	if node != nil {
		cells = append(cells, node(s.Key))
	}
	return cells
}

// levelCells are the TOKENS, CAPACITY, RATE, FILL and FULL-IN cells of an existing bucket.
func levelCells(s bucket.State) (tokens, capacity, rate, fill, full string) {
	tokens, capacity, rate, fill, full = format.Tokens(s.Tokens), "?", "?", "?", "?"
	switch {
	case s.HasSpec():
		capacity, rate = format.Tokens(s.Spec.Capacity), format.Rate(s.Spec.Rate)
		fill, full = format.Percent(s.Fill()), format.Wait(s.TimeToFull())
	case !s.LevelKnown():
		tokens = UnknownTAT
	default:
		tokens += " (stored)"
	}
	return
}

// UnknownTAT is the tokens of a GCRA bucket whose spec is unknown.
const UnknownTAT = "? (a TAT: needs capacity and rate)"

// LayoutLabel is the LAYOUT column: the layout's name, with "?" when it is a guess.
func LayoutLabel(s bucket.State) string {
	if s.Guess != "" {
		return s.Layout.Name + "?"
	}
	return s.Layout.Name
}

// WithNode appends the NODE column to a header when node is set (-o wide).
func WithNode(node func(string) string, header ...string) []string {
	if node != nil {
		return append(header, "NODE")
	}
	return header
}

// StateWriter writes pages of states to out (row's cells, or StateViews); see sees each.
func StateWriter(out *Stream, node func(string) string, row func(bucket.State, func(string) string) []string,
	see func(bucket.State)) func([]bucket.State) error {
	return StateWriterCost(out, node, row, see, nil)
}

// StateWriterCost is StateWriter with each view's retry-after for cost(key) (nil: 1).
func StateWriterCost(out *Stream, node func(string) string, row func(bucket.State, func(string) string) []string,
	see func(bucket.State), cost func(string) float64) func([]bucket.State) error {
	return func(page []bucket.State) error {
		for _, s := range page {
			see(s)
			var err error
			if out.IsTable() {
				err = out.Add(nil, row(s, node)...)
			} else {
				err = out.Add(StateNodeCost(s, node, cost))
			}
			if err != nil {
				return err
			}
		}
		return out.Flush()
	}
}

// StateNodeCost is s's view with the node serving it (node nil: none) and the
// retry-after for cost(key) (nil: 1).
func StateNodeCost(s bucket.State, node func(string) string, cost func(string) float64) StateView {
	c := 1.0
	if cost != nil {
		c = cost(s.Key)
	}
	v := StateOfCost(s, c)
	if node != nil {
		v.Node = node(s.Key)
	}
	return v
}

// ListRow is one row of the list table.
func ListRow(s bucket.State, node func(string) string) []string {
	var cells []string
	if s.Problem != "" {
		cells = []string{format.SafeKey(s.Key), "-", "-", "-", "-", "-", "-", format.TTL(s.TTL), format.SafeKey(s.Problem)}
	} else {
		tokens, capacity, rate, fill, full := levelCells(s)
		note := ""
		switch {
		case s.Ahead > 0 && s.Layout.Type == bucket.GCRA:
			note = format.Debt(s.Ahead)
		case s.Ahead > 0:
			note = format.Ahead(s.Ahead)
		case s.Guess != "":
			note = "guess: " + format.DeclareHint(s.Layout.Name) + " to act on it"
		}
		cells = []string{format.SafeKey(s.Key), LayoutLabel(s), tokens, capacity, rate, fill, full, listTTL(s), note}
	}
	if node != nil {
		cells = append(cells, node(s.Key))
	}
	return cells
}

// listTTL is the TTL cell of list's tables: a bucket with no TTL is flagged.
func listTTL(s bucket.State) string {
	if s.Exists && s.TTL == -1 {
		return "none!"
	}
	return format.TTL(s.TTL)
}

// HotView is one bucket of list --hot in JSON and YAML; RateFrom says whether the rates
// come from the native "counters" or the "writes" seen.
type HotView struct {
	StateView
	DecisionsPerSec float64  `json:"decisions_per_sec"`
	DeniedPerSec    *float64 `json:"denied_per_sec"`
	WritesSeen      int64    `json:"writes_seen"`
	RateFrom        string   `json:"rate_from"`
	RankedBy        string   `json:"ranked_by"`
	ObservedMS      float64  `json:"observed_ms"`
}

// HotRow is one row of the list --hot table.
func HotRow(b hot.Bucket, node func(string) string) []string {
	s := b.State
	rate, denied := format.PerSecond(b.PerSecond), "-"
	if b.Counted {
		denied = format.PerSecond(b.DeniedPerSecond)
	} else {
		rate += " (writes)"
	}
	tokens, capacity, _, fill, _ := levelCells(s)
	cells := []string{format.SafeKey(s.Key), LayoutLabel(s), rate, denied, tokens, capacity, fill, listTTL(s)}
	if node != nil {
		cells = append(cells, node(s.Key))
	}
	return cells
}

func HotOf(b hot.Bucket, rep hot.Report, node func(string) string) HotView {
	v := HotView{StateView: StateNodeCost(b.State, node, nil), DecisionsPerSec: format.JSONRate(b.PerSecond),
		WritesSeen: b.Writes, RateFrom: "writes", RankedBy: rep.Source, ObservedMS: format.JSONMS(rep.Observed)}
	if b.Counted {
		d := format.JSONRate(b.DeniedPerSecond)
		v.DeniedPerSec, v.RateFrom = &d, "counters"
	}
	return v
}

// ResetView is one line of reset's JSON/YAML.
type ResetView struct {
	Key          string   `json:"key"`
	Layout       string   `json:"layout"`
	Action       string   `json:"action"`
	TokensBefore *float64 `json:"tokens_before"`
	TokensAfter  *float64 `json:"tokens_after"`
	// TokensAfterWriterClock is tokens_after on the clock of the writer ahead, if it differs.
	AheadMS                float64  `json:"ahead_ms"`
	TokensAfterWriterClock *float64 `json:"tokens_after_writer_clock,omitempty"`
	Note                   string   `json:"note,omitempty"`
	Done                   bool     `json:"done"`
	// Outcome is what the reset did (OutcomeName); empty in a plan.
	Outcome string `json:"outcome,omitempty"`
}

func ResetRow(v ResetView) []string {
	num := func(p *float64) string {
		if p == nil {
			return "?"
		}
		return format.Tokens(*p)
	}
	action := v.Action
	switch {
	case v.Done:
		action += " ✓"
	case v.Outcome != "" && v.Outcome != "reset":
		action += ": " + v.Outcome
	}
	after := num(v.TokensAfter)
	if v.TokensAfterWriterClock != nil {
		after += " (" + num(v.TokensAfterWriterClock) + " on the writer's clock)"
	}
	return []string{format.SafeKey(v.Key), v.Layout, num(v.TokensBefore), action, after}
}
