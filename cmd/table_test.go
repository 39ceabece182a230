package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// colorIO are streams as on a colour terminal, writing to buffers.
func colorIO() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	io, _, out, errOut := testStreams()
	io.StdoutTTY, io.NoColor = true, false
	return io, out, errOut
}

// cells writes a line's display cells, a wide character taking two (the second empty).
func cells(line string) []string {
	var c []string
	for _, r := range line {
		c = append(c, string(r))
		for w := ansi.StringWidth(string(r)); w > 1; w-- {
			c = append(c, "")
		}
	}
	return c
}

// columnStarts are the display offsets at which the header's titles start (titles are
// separated by two spaces or more).
func columnStarts(header string) []int {
	var starts []int
	c := cells(header)
	for i := range c {
		if c[i] != " " && (i == 0 || (i >= 2 && c[i-1] == " " && c[i-2] == " ")) {
			starts = append(starts, i)
		}
	}
	return starts
}

// checkAligned asserts out is a table in colour whose rows, once the ANSI codes are
// stripped, fit the header's columns: before every column two spaces, and at its start
// either the cell's text or, for an empty cell, blanks up to the next column (or the end
// of the line).
func checkAligned(t *testing.T, name, out string, wantRows int) {
	t.Helper()
	if !strings.Contains(out, "\x1b[") {
		t.Fatalf("%s: no colour in the output (the test must run with colour on): %q", name, out)
	}
	lines := strings.Split(strings.TrimRight(ansi.Strip(out), "\n"), "\n")
	if len(lines)-1 != wantRows {
		t.Fatalf("%s: %d rows, want %d:\n%s", name, len(lines)-1, wantRows, ansi.Strip(out))
	}
	starts := columnStarts(lines[0])
	if len(starts) < 2 {
		t.Fatalf("%s: header %q has %d columns", name, lines[0], len(starts))
	}
	for _, l := range lines[1:] {
		c := cells(l)
		for i, s := range starts[1:] {
			if s >= len(c) {
				break // empty last cells
			}
			aligned := c[s-1] == " " && c[s-2] == " "
			if aligned && c[s] == " " { // an empty cell: blank up to the next column
				end := len(c)
				if i+2 < len(starts) {
					end = min(end, starts[i+2])
				}
				aligned = strings.TrimSpace(strings.Join(c[s:end], "")) == ""
			}
			if !aligned {
				t.Errorf("%s: row does not fit the column at offset %d:\n%s\n%s", name, s, lines[0], l)
				break
			}
		}
	}
}

// TestTablesAlignWithColour: every table cmd prints (newTable and the stream table) lays
// out by display width and bolds its header after padding, so colour and wide characters
// never shift a column.
func TestTablesAlignWithColour(t *testing.T) {
	t.Parallel()
	io, out, _ := colorIO()
	tb := output.NewTable(io, "KEY", "LAYOUT", "TOKENS", "ACTION")
	tb.Add("rl:{tenant-4711}:route:/api/v1/orders", "native", "9,289", "refill (delete)")
	tb.Add("日本語のキー", "express", "0.5", output.ColorStyle(io).Bold(true).Render("set 3 tokens"))
	tb.Add("k", "native", "16,000", "none")
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	checkAligned(t, "newTable", out.String(), 3)

	// The stream table fixes its columns on the first page: later, narrower pages keep them.
	io, out, _ = colorIO()
	s := output.NewStream(io, output.FormatTable, "KEY", "TOKENS", "TTL")
	for _, k := range []string{"rl:{tenant-4711}:route:/api/v1/users", "日本語", "a"} {
		if err := s.Add(nil, k, "7.09", "1m1s"); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil { // one row per page
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkAligned(t, "stream", out.String(), 3)
}

// TestCommandTablesAlignWithColour runs the commands that print tables with colour on:
// list, inspect (-o wide), the reset preview, load --dry-run and script load.
func TestCommandTablesAlignWithColour(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now := time.Now().UnixMicro()
	keys := []string{"tb:a", "tb:日本語のキー", "tb:{tenant-4711}:route:/api/v1/orders"}
	for i, k := range keys {
		c.HSet(ctx, k, "tokens", 7.09+float64(i)*1000, "ts", now, "capacity", "20000", "rate", "0.5", "allowed", 5912, "denied", 3)
		c.Expire(ctx, k, time.Hour)
	}
	runColor := func(args ...string) string {
		t.Helper()
		io, out, errOut := colorIO()
		f := newTestFactory(t, io, VersionInfo{Version: "test"})
		if code := Run(ctx, f, append([]string{"--url", srv.URL()}, args...)); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out.String()
	}
	checkAligned(t, "list", runColor("list", "--match", "tb:*"), 3)
	checkAligned(t, "list -o wide", runColor("list", "--match", "tb:*", "-o", "wide"), 3) // an empty NOTE before NODE
	checkAligned(t, "inspect", runColor(append([]string{"inspect", "-o", "wide"}, keys...)...), 3)
	checkAligned(t, "reset preview", runColor(append([]string{"reset", "--dry-run", "--tokens", "5"}, keys...)...), 3)
	checkAligned(t, "load --dry-run", runColor("load", "tb:{tenant-4711}:route:/api/v1/orders", "--raw-key", "--dry-run"), 1)
	checkAligned(t, "script load", runColor("script", "load"), 1)
}
