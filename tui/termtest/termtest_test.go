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
