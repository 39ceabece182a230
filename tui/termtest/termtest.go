package termtest

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Terminal is a w×h screen with unbounded scrollback above it.
type Terminal struct {
	w, h     int
	lines    [][]rune // scrollback and screen; the screen is the last h rows reached
	styles   [][]Style
	style    Style  // of the next rune written (SGR)
	pending  []byte // an escape sequence or a rune cut by the end of the last Write
	row, col int
	// ONLCR turns LF into CR LF, as a terminal's line discipline does for a program that
	// prints with fmt.Println outside raw mode.
	ONLCR bool
}

// New returns an empty terminal of w columns and h rows.
func New(w, h int) *Terminal {
	return &Terminal{w: w, h: h, lines: [][]rune{nil}, styles: [][]Style{nil}}
}

// Write replays p. It never fails. An escape sequence or a UTF-8 rune that p ends in the
// middle of waits for the next Write, as a terminal reading a pipe in pieces does.
func (t *Terminal) Write(p []byte) (int, error) {
	data := append(t.pending, p...)
	n := whole(data)
	t.pending = append([]byte(nil), data[n:]...)
	t.replay(string(data[:n]))
	return len(p), nil
}

// whole is the length of b's prefix that holds no cut escape sequence or rune at its end.
func whole(b []byte) int {
	if i := bytes.LastIndexByte(b, 0x1b); i >= 0 && !escapeDone(b[i:]) {
		return i
	}
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if c := b[len(b)-k]; utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return len(b) - k
			}
			break
		}
	}
	return len(b)
}

// escapeDone says the escape sequence at the start of s is complete.
func escapeDone(s []byte) bool {
	if len(s) < 2 {
		return false
	}
	switch s[1] {
	case '[':
		for _, c := range s[2:] {
			if c >= 0x40 && c <= 0x7e {
				return true
			}
		}
		return false
	case ']', 'P', '_', '^':
		return bytes.IndexByte(s, '\a') >= 0 || bytes.Contains(s[2:], []byte("\x1b\\"))
	}
	return true
}

func (t *Terminal) replay(s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			n = t.escape(s[i:])
		case r == '\r':
			t.col = 0
		case r == '\n':
			if t.ONLCR {
				t.col = 0
			}
			t.moveTo(t.row+1, t.col)
		case r == '\b':
			t.col = max(0, t.col-1)
		case r == '\a', r < 0x20, r == 0x7f:
		default:
			t.put(r)
		}
		i += n
	}
}

// Lines returns every line written, scrollback first, without trailing blanks, and
// without the blank lines at the end.
func (t *Terminal) Lines() []string {
	out := make([]string, len(t.lines))
	for i, l := range t.lines {
		out[i] = strings.TrimRight(string(l), " ")
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// String is Lines joined by newlines.
func (t *Terminal) String() string { return strings.Join(t.Lines(), "\n") }

// top is the first row of the screen: cursor moves never leave it.
func (t *Terminal) top() int { return max(0, len(t.lines)-t.h) }

func (t *Terminal) moveTo(row, col int) {
	row = max(row, t.top())
	for len(t.lines) <= row {
		t.lines = append(t.lines, nil)
		t.styles = append(t.styles, nil)
	}
	t.row, t.col = row, min(max(col, 0), t.w)
}

func (t *Terminal) put(r rune) {
	if t.col >= t.w { // autowrap: the cell after the last column is the next line's first
		t.moveTo(t.row+1, 0)
	}
	l, st := t.lines[t.row], t.styles[t.row]
	for len(l) <= t.col {
		l = append(l, ' ')
	}
	for len(st) < len(l) {
		st = append(st, Style{})
	}
	l[t.col], st[t.col] = r, t.style
	t.lines[t.row], t.styles[t.row] = l, st
	t.col++
}

// clear blanks columns [from, to) of row.
func (t *Terminal) clear(row, from, to int) {
	l, st := t.lines[row], t.styles[row]
	for c := from; c < min(to, len(l)); c++ {
		l[c] = ' '
		if c < len(st) {
			st[c] = Style{}
		}
	}
}

// escape handles the escape sequence at the start of s and returns its length.
func (t *Terminal) escape(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return t.csi(s)
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: up to BEL or ST
		for i := 2; i < len(s); i++ {
			if s[i] == '\a' {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	return 2
}

func (t *Terminal) csi(s string) int {
	i := 2
	for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
		i++
	}
	if i == len(s) {
		return len(s)
	}
	params, final := s[2:i], s[i]
	if strings.ContainsAny(params, "?<=>") {
		return i + 1 // private modes (cursor, bracketed paste, ...)
	}
	if final == 'm' {
		t.sgr(params)
		return i + 1
	}
	var ps []int
	for _, p := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(p)
		ps = append(ps, n)
	}
	arg := func(k, def int) int {
		if k < len(ps) && ps[k] > 0 {
			return ps[k]
		}
		return def
	}
	switch final {
	case 'A':
		t.moveTo(t.row-arg(0, 1), t.col)
	case 'B':
		t.moveTo(min(t.row+arg(0, 1), t.top()+t.h-1), t.col)
	case 'C':
		t.col = min(t.w, t.col+arg(0, 1))
	case 'D':
		t.col = max(0, t.col-arg(0, 1))
	case 'G':
		t.col = min(t.w, arg(0, 1)-1)
	case 'H', 'f':
		t.moveTo(t.top()+arg(0, 1)-1, arg(1, 1)-1)
	case 'K':
		switch arg(0, 0) {
		case 0:
			t.clear(t.row, t.col, t.w)
		case 1:
			t.clear(t.row, 0, t.col+1)
		case 2:
			t.clear(t.row, 0, t.w)
		}
	case 'J':
		from, to := t.row, len(t.lines)
		switch arg(0, 0) {
		case 0:
			t.clear(t.row, t.col, t.w)
			from++
		case 1:
			from, to = t.top(), t.row
			t.clear(t.row, 0, t.col+1)
		default:
			from = t.top()
		}
		for r := from; r < to; r++ {
			t.clear(r, 0, t.w)
		}
	}
	return i + 1
}
