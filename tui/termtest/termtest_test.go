package termtest

import "testing"

func TestReplay(t *testing.T) {
	for name, c := range map[string]struct {
		in    string
		onlcr bool
		want  string
	}{
		"lines":                  {in: "ab\r\ncd", want: "ab\ncd"},
		"LF keeps the column":    {in: "ab\ncd", want: "ab\n  cd"},
		"ONLCR":                  {in: "ab\ncd\n", onlcr: true, want: "ab\ncd"},
		"erase line under it":    {in: "ab\r\ncd\x1b[2K\r", want: "ab"},
		"erase right":            {in: "abcd\r\x1b[2Cx\x1b[K", want: "abx"},
		"cursor up and repaint":  {in: "one\r\ntwo\r\nthree\r\x1b[2Ax\x1b[K\r\n\x1b[J", want: "x"},
		"autowrap":               {in: "abcdefgh", want: "abcde\nfgh"},
		"SGR, modes and OSC":     {in: "\x1b[?25l\x1b[1;31mred\x1b[0m\x1b]0;title\x07!", want: "red!"},
		"up stops at the screen": {in: "1\r\n2\r\n3\r\n4\r\n5\x1b[9Ax", want: "1\n2\n3x\n4\n5"},
	} {
		term := New(5, 3)
		term.ONLCR = c.onlcr
		_, _ = term.Write([]byte(c.in))
		if got := term.String(); got != c.want {
			t.Errorf("%s: got %q, want %q", name, got, c.want)
		}
	}
}

func TestStyles(t *testing.T) {
	term := New(20, 3)
	_, _ = term.Write([]byte("a\x1b[1;31mb\x1b[38;5;212mc\x1b[38;2;1;2;3;48;5;16md\x1b[0me\x1b[2K\r\nf"))
	rows := term.Cells(true)
	if len(rows) != 2 || len(rows[0]) != 0 || string(rows[1][0].R) != "f" {
		t.Fatalf("EL does not clear cells and their styles: %+v", rows)
	}
	term = New(20, 3)
	_, _ = term.Write([]byte("a\x1b[1;31mb\x1b[38;5;212mc\x1b[38;2;1;2;3;48;5;16md\x1b[0me"))
	row := term.Cells(false)[0]
	want := []Style{
		{},
		{Bold: true, FG: Color{true, 205, 0, 0}},
		{Bold: true, FG: Color{true, 255, 135, 215}},
		{Bold: true, FG: Color{true, 1, 2, 3}, BG: Color{true, 0, 0, 0}},
		{},
	}
	for i, w := range want {
		if row[i].Style != w {
			t.Errorf("cell %d %q: %+v, want %+v", i, row[i].R, row[i].Style, w)
		}
	}
}

// TestCutWrites: a sequence or a rune cut between two writes is replayed whole.
func TestCutWrites(t *testing.T) {
	in := "one\r\ntwo\x1b[1A\rX\x1b[38;5;212m⠤\x1b]0;t\x07!"
	for cut := 1; cut < len(in); cut++ {
		term := New(10, 3)
		_, _ = term.Write([]byte(in[:cut]))
		_, _ = term.Write([]byte(in[cut:]))
		if got := term.String(); got != "X⠤!\ntwo" {
			t.Fatalf("cut at %d: %q", cut, got)
		}
	}
}
