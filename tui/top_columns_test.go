package tui

import (
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
)

// TestColumnsKeepCapAndRateBesideALongKey: at 80 columns one long key (50 cells) is cut to
// at most two fifths of the width instead of pushing CAP and RATE out; on a wide terminal
// the key gets its whole width; the row always fits the terminal.
func TestColumnsKeepCapAndRateBesideALongKey(t *testing.T) {
	titles := func(cols []column) map[string]bool {
		m := map[string]bool{}
		for _, c := range cols {
			m[c.title] = true
		}
		return m
	}
	width := func(cols []column, keyW int) int {
		n := gutter + keyW
		for _, c := range cols {
			n += 1 + c.width
		}
		return n
	}
	cols, keyW := columns(80, 50, "FILL")
	got := titles(cols)
	for _, want := range []string{"FILL", "TOKENS", "DENY/s", "CAP", "RATE"} {
		if !got[want] {
			t.Errorf("80 columns beside a 50-cell key: no %s (columns %v, key %d)", want, got, keyW)
		}
	}
	if keyW >= 50 || keyW < keyMin || width(cols, keyW) > 80 {
		t.Errorf("80 columns: key %d cells, row %d wide", keyW, width(cols, keyW))
	}
	cols, keyW = columns(200, 50, "FILL")
	if keyW < 50 || width(cols, keyW) > 200 || !titles(cols)["LAYOUT"] {
		t.Errorf("200 columns: key %d cells, row %d wide, columns %v", keyW, width(cols, keyW), titles(cols))
	}
	// Short keys leave the room to the columns, as before.
	cols, _ = columns(80, 12, "FILL")
	if got := titles(cols); !got["CAP"] || !got["RATE"] || !got["TTL"] {
		t.Errorf("80 columns, short keys: columns %v", got)
	}
	// Sorted by busy, the ALLOW/s column is shown even beside a long key at 60 columns.
	cols, keyW = columns(60, 50, SortBusy.column())
	if got := titles(cols); !got["ALLOW/s"] || width(cols, keyW) > 60 {
		t.Errorf("60 columns sorted by busy: columns %v, row %d wide", got, width(cols, keyW))
	}
}

// TestTopUpdatedAhead: the UPDATED cell of a bucket stored ahead of the server's clock says
// so (format.AheadShort), never a negative age ("-4.9s").
func TestTopUpdatedAhead(t *testing.T) {
	var updated column
	for _, c := range topColumns {
		if c.title == "UPDATED" {
			updated = c
		}
	}
	now := int64(1_700_000_000_000_000)
	for _, c := range []struct {
		ts   int64
		want string
	}{
		{now + 4_900_000, "4.9s ahead"},
		{now - 4_900_000, "      4.9s"},
	} {
		r := &topRow{state: bucket.State{Exists: true, Now: now, Stored: bucket.Level{TS: c.ts}}}
		if got := updated.cell(nil, r, updated.width); got != c.want {
			t.Errorf("stored at now%+dµs: UPDATED %q, want %q", c.ts-now, got, c.want)
		}
	}
}
