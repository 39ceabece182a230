package output

import (
	"fmt"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// InspectNotes collects, across pages, what the table's notes explain.
type InspectNotes struct {
	guessed, noSpec bool
	ahead           []string // the first buckets written ahead, and the first ambiguous ones
	moreAhead       int
	ambiguous       []string
}

// See notes what s needs said.
func (n *InspectNotes) See(s bucket.State) {
	if s.Problem != "" {
		return
	}
	n.guessed = n.guessed || s.Guess != ""
	n.noSpec = n.noSpec || (s.Exists && !s.HasSpec()) // a missing key has its own note
	// A bucket written ahead gets one note: why it is ambiguous, else how far ahead.
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
	if s.HasSpec() && s.Exists && s.Problem == "" && s.Decide(0).FullByExpiry && len(n.ambiguous) < 5 {
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
	for _, a := range n.ahead {
		fmt.Fprintln(io.ErrOut, "note: "+a)
	}
	for _, a := range n.ambiguous {
		fmt.Fprintln(io.ErrOut, "note: "+a)
	}
	if n.moreAhead > 0 {
		fmt.Fprintf(io.ErrOut, "note: %s more bucket(s) stored ahead of the server's clock\n", format.Count(int64(n.moreAhead)))
	}
}
