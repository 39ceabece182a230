package output

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

var InspectHeader = []string{"KEY", "LAYOUT", "TOKENS", "CAPACITY", "RATE", "FILL", "FULL-IN", "TTL", "UPDATED", "ALLOWED", "DENIED"}

// InspectRow appends inspect's cells of s to dst.
func InspectRow(dst []string, s bucket.State, node func(string) string) []string {
	if s.Problem != "" {
		return nodeRow(dst, node, s.Key, format.SafeKey(s.Key), "-", "-", "-", "-", "-", "-", format.TTL(s.TTL), "-", "-", "-")
	}
	tokens, capacity, rate, fill, full := levelCells(&s)
	if !s.Exists {
		tokens, fill, full = "no such key", "-", "-"
	}
	updated := "-"
	if s.Exists && s.TAT == nil { // a GCRA bucket stores no time of its last update
		updated = format.Ago(s.Age())
	}
	return nodeRow(dst, node, s.Key, format.SafeKey(s.Key), LayoutLabel(s), tokens, capacity, rate, fill, full, format.TTL(s.TTL), updated,
		format.Count(s.Allowed), format.Count(s.Denied))
}

// nodeRow appends a row's cells to dst and, with node set (-o wide), the node serving key.
func nodeRow(dst []string, node func(string) string, key string, cells ...string) []string {
	dst = append(dst, cells...)
	if node != nil {
		return append(dst, node(key))
	}
	return dst
}

// levelCells are the TOKENS, CAPACITY, RATE, FILL and FULL-IN cells of an existing bucket.
func levelCells(s *bucket.State) (tokens, capacity, rate, fill, full string) {
	tokens, capacity, rate, fill, full = format.Tokens(s.Tokens), "?", "?", "?", "?"
	switch {
	case s.HasSpec():
		capacity, rate = specCells(s.Spec)
		fill, full = format.Percent(s.Fill()), format.Wait(s.Decide(0).ResetAfter)
	case !s.LevelKnown():
		tokens = UnknownTAT
	default:
		tokens += " (stored)"
	}
	return
}

// lastSpec is the spec whose cells specCells wrote last: the buckets of a rule share theirs.
var lastSpec atomic.Pointer[specText]

type specText struct {
	spec           bucket.Spec
	capacity, rate string
}

// specCells are the CAPACITY and RATE cells of spec.
func specCells(spec bucket.Spec) (capacity, rate string) {
	if t := lastSpec.Load(); t != nil && t.spec == spec {
		return t.capacity, t.rate
	}
	t := &specText{spec, format.Tokens(spec.Capacity), format.Rate(spec.Rate)}
	lastSpec.Store(t)
	return t.capacity, t.rate
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

// StateWriter writes pages of states to out (row's cells, or StateViews with each
// retry-after for cost(key), nil: 1); see sees each.
func StateWriter(out *Stream, node func(string) string, row func([]string, bucket.State, func(string) string) []string,
	see func(bucket.State), cost func(string) float64) func([]bucket.State) error {
	var cells []string
	return func(page []bucket.State) error {
		for _, s := range page {
			see(s)
			var err error
			if out.IsTable() {
				cells = row(cells[:0], s, node)
				err = out.Add(nil, cells...)
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

// StateNodeCost is s's view with its node (if node is set) and retry-after for cost(key).
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

// ListRow appends list's cells of s to dst.
func ListRow(dst []string, s bucket.State, node func(string) string) []string {
	if s.Problem != "" {
		return nodeRow(dst, node, s.Key, format.SafeKey(s.Key), "-", "-", "-", "-", "-", "-", format.TTL(s.TTL), format.SafeKey(s.Problem))
	}
	tokens, capacity, rate, fill, full := levelCells(&s)
	note := ""
	switch {
	case s.Ahead > 0 && s.Layout.Type == bucket.GCRA:
		note = format.Debt(s.Ahead)
	case s.Ahead > 0:
		note = format.Ahead(s.Ahead)
	case s.Guess != "":
		note = "guess: " + format.DeclareHint(s.Layout.Name) + " to act on it"
	}
	return nodeRow(dst, node, s.Key, format.SafeKey(s.Key), LayoutLabel(s), tokens, capacity, rate, fill, full, listTTL(s), note)
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

func HotRow(b hot.Bucket, node func(string) string) []string {
	s := b.State
	rate, denied := format.PerSecond(b.PerSecond), "-"
	if b.Counted {
		denied = format.PerSecond(b.DeniedPerSecond)
	} else {
		rate += " (writes)"
	}
	tokens, capacity, _, fill, _ := levelCells(&s)
	return nodeRow(nil, node, s.Key, format.SafeKey(s.Key), LayoutLabel(s), rate, denied, tokens, capacity, fill, listTTL(s))
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

// ResetView is one line of reset's JSON/YAML; Outcome (ResetOutcome.Name) is empty in a plan.
type ResetView struct {
	Key                    string   `json:"key"`
	Layout                 string   `json:"layout"`
	Action                 string   `json:"action"`
	TokensBefore           *float64 `json:"tokens_before"`
	TokensAfter            *float64 `json:"tokens_after"`
	AheadMS                float64  `json:"ahead_ms"`
	TokensAfterWriterClock *float64 `json:"tokens_after_writer_clock,omitempty"` // if the writer ahead's clock differs
	Note                   string   `json:"note,omitempty"`
	Done                   bool     `json:"done"`
	Outcome                string   `json:"outcome,omitempty"`
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

// InspectNotes collects, across pages, what the table's notes explain.
type InspectNotes struct {
	guessed, noSpec bool
	ahead           []string // the first five buckets written ahead, and ambiguous ones
	moreAhead       int
	ambiguous       []string
}

func (n *InspectNotes) See(s bucket.State) {
	if s.Problem != "" {
		return
	}
	n.guessed = n.guessed || s.Guess != ""
	n.noSpec = n.noSpec || (s.Exists && !s.HasSpec()) // a missing key has its own note
	ambiguous := s.Ambiguous()
	if ambiguous && len(n.ambiguous) < 5 {
		n.ambiguous = append(n.ambiguous, fmt.Sprintf("%s: %s", format.SafeKey(s.Key), AmbiguityNote(s)))
	}
	if s.Ahead > 0 && !ambiguous {
		if len(n.ahead) < 5 {
			n.ahead = append(n.ahead, fmt.Sprintf("%s: %s", format.SafeKey(s.Key), AheadNoteFor(s.Layout, s.Ahead)))
		} else {
			n.moreAhead++
		}
	}
	if s.HasSpec() && s.Exists && s.Decide(0).FullByExpiry && len(n.ambiguous) < 5 {
		n.ambiguous = append(n.ambiguous, fmt.Sprintf("%s: full when the key expires in %s, before the refill would fill it", format.SafeKey(s.Key), format.Duration(s.TTL)))
	}
}

// Print says the notes on stderr under a table.
func (n *InspectNotes) Print(io *iostreams.IOStreams, outFormat string) {
	if outFormat != FormatTable && outFormat != FormatWide {
		return
	}
	if n.guessed {
		fmt.Fprintln(io.ErrOut, "note: LAYOUT with ? was detected from the key's shape (set --layout or a rule to be sure)")
	}
	if n.noSpec {
		fmt.Fprintln(io.ErrOut, "note: capacity/rate unknown for some buckets: tokens shown as stored, not refilled (pass --capacity/--rate or add a rule)")
	}
	for _, a := range slices.Concat(n.ahead, n.ambiguous) {
		fmt.Fprintln(io.ErrOut, "note: "+a)
	}
	if n.moreAhead > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s more bucket(s) stored ahead of the server's clock\n", format.Count(int64(n.moreAhead)))
	}
}
