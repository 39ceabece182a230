package output

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/charmbracelet/lipgloss"
	"go.yaml.in/yaml/v3"
	"golang.org/x/term"

	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// FormatJSONL is one JSON object per line, for streams of records.
const FormatJSONL = "jsonl"

// Stream writes records a page at a time (one write a page; memory holds one): a table
// whose columns keep their width, a JSON array, JSON lines or a YAML sequence.
type Stream struct {
	out    *bufio.Writer
	format string
	n      int
	table  *streamTable
	ind    []byte // a JSON record indented, the buffer reused
}

func NewStream(io *iostreams.IOStreams, format string, header ...string) *Stream {
	s := &Stream{out: bufio.NewWriterSize(io.Out, 64<<10), format: format}
	if !IsData(format) && format != FormatJSONL {
		s.table = newStreamTable(io, header)
	}
	return s
}

// IsTable says records are table rows (cells), not data (v).
func (s *Stream) IsTable() bool { return s.table != nil }

// Add buffers one record: v for the data formats, cells for the table.
func (s *Stream) Add(v any, cells ...string) error {
	s.n++
	switch s.format {
	case FormatJSON:
		c, err := json.Marshal(v)
		if err != nil {
			return err
		}
		s.ind = indentJSON(s.ind[:0], c, "  ", "  ")
		if s.n == 1 {
			s.out.WriteString("[\n  ")
		} else {
			s.out.WriteString(",\n  ")
		}
		s.out.Write(format.EscapeUnprintable(s.ind))
	case FormatJSONL:
		return WriteJSONLine(s.out, v)
	case FormatYAML:
		n, err := yamlNode(v)
		if err != nil {
			return err
		}
		quoteUnprintable(n)
		b, err := yaml.Marshal(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{n}})
		if err != nil {
			return err
		}
		s.out.Write(format.EscapeUnprintable(b))
	default:
		s.table.add(cells)
	}
	return nil
}

func (s *Stream) Flush() error {
	if s.table != nil {
		s.table.writePage(s.out)
	}
	return s.out.Flush()
}

func (s *Stream) Close() error {
	switch {
	case s.n == 0 && IsData(s.format):
		s.out.WriteString("[]\n")
	case s.format == FormatJSON:
		s.out.WriteString("\n]\n")
	}
	return s.Flush()
}

// End closes s's document when err is nil and returns err, else the close's error. After a
// failure the document is left open (JSON without its closing ], YAML ending in an open [),
// so that a parser rejects a partial result instead of taking it for the whole one.
func (s *Stream) End(err error) error {
	if err == nil {
		return s.Close()
	}
	switch {
	case s.format == FormatJSON && s.n > 0:
		s.out.WriteString("\n")
	case IsData(s.format):
		s.out.WriteString("[\n")
	}
	_ = s.Flush()
	return err
}

// Table is a table printed at once, laid out as a Stream's.
type Table struct{ s *Stream }

func NewTable(io *iostreams.IOStreams, header ...string) *Table {
	return &Table{NewStream(io, FormatTable, header...)}
}

func (t *Table) Add(cells ...string) { _ = t.s.Add(nil, cells...) }

func (t *Table) Render() error { return t.s.Flush() }

// streamTable lays out columns by display width, set by the first page and widened when
// needed; on a terminal the key column takes what is left, cut in the middle.
type streamTable struct {
	header  []string
	rows    [][]string // the page's rows, in cells
	cells   []string
	widths  []int
	bold    bool
	head    lipgloss.Style
	width   int // terminal width; 0: piped
	started bool
	buf     []byte // the line being laid out
}

func newStreamTable(io *iostreams.IOStreams, header []string) *streamTable {
	return &streamTable{header: header, bold: io.Color(), head: ColorStyle(io).Bold(true), width: TermWidth(io)}
}

// TermWidth is the width of the terminal on stdout, 0 when stdout is not one.
func TermWidth(io *iostreams.IOStreams) int {
	if !io.StdoutTTY {
		return 0
	}
	if f, ok := io.Out.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return 0
}

// add copies cells: a caller may reuse them.
func (t *streamTable) add(cells []string) {
	start := len(t.cells)
	t.cells = append(t.cells, cells...)
	t.rows = append(t.rows, t.cells[start:len(t.cells):len(t.cells)])
}

const colGap = 2

func (t *streamTable) writePage(w *bufio.Writer) {
	if !t.started && len(t.rows) == 0 {
		return // no header over no rows: stderr says why there are none
	}
	if !t.started {
		t.widths = make([]int, len(t.header))
		for i, h := range t.header {
			t.widths[i] = format.Width(h)
		}
	}
	for _, r := range t.rows {
		for i, c := range r {
			if i < len(t.widths) {
				t.widths[i] = max(t.widths[i], format.Width(c))
			}
		}
	}
	if t.width > 0 && len(t.widths) > 1 {
		rest := 0
		for _, cw := range t.widths[1:] {
			rest += cw + colGap
		}
		if avail := t.width - rest; t.widths[0] > avail {
			t.widths[0] = max(avail, 16)
		}
	}
	if !t.started {
		t.started = true
		line := string(t.line(t.header))
		if t.bold {
			line = t.head.Render(line)
		}
		w.WriteString(line)
		w.WriteByte('\n')
	}
	for _, r := range t.rows {
		w.Write(t.line(r))
		w.WriteByte('\n')
	}
	clear(t.rows)
	clear(t.cells)
	t.rows, t.cells = t.rows[:0], t.cells[:0]
}

// line lays out cells in t.buf, which the next call reuses.
func (t *streamTable) line(cells []string) []byte {
	b := t.buf[:0]
	for i, c := range cells {
		if i == 0 && t.width > 0 {
			c = format.TruncMiddle(c, t.widths[0])
		}
		b = append(b, c...)
		if i < len(cells)-1 {
			for pad := t.widths[i] - format.Width(c) + colGap; pad > 0; pad-- {
				b = append(b, ' ')
			}
		}
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	t.buf = b
	return b
}

// Progress is a one-line report on stderr, redrawn in place, only on a terminal.
type Progress struct {
	io      *iostreams.IOStreams
	shown   bool
	Enabled bool
}

func NewProgress(io *iostreams.IOStreams) *Progress { return &Progress{io: io, Enabled: io.StderrTTY} }

func (p *Progress) Show(format string, args ...any) {
	if !p.Enabled {
		return
	}
	fmt.Fprintf(p.io.ErrOut, "\r\x1b[K"+format, args...)
	p.shown = true
}

func (p *Progress) Clear() {
	if p.shown {
		fmt.Fprint(p.io.ErrOut, "\r\x1b[K")
		p.shown = false
	}
}

// indentJSON appends json.Marshal's src to dst indented as json.Indent would, byte for byte,
// without its validating scanner (which cost more than the Marshal).
func indentJSON(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for i := 0; i < depth; i++ {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
