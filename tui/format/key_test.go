package format

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestSafeKey(t *testing.T) {
	cases := map[string]string{
		"rate:user:42":           "rate:user:42",
		"rl:{tenant}:ünï":        "rl:{tenant}:ünï",
		"a b":                    "a b",
		"x\x1b]52;c;aGk=\x07y":   `x\x1b]52;c;aGk=\ay`,
		"clear\x1b[2J":           `clear\x1b[2J`,
		"nl\nkey":                `nl\nkey`,
		"bad\xffutf8":            `bad\xffutf8`,
		"c1\u009bq":              `c1\u009bq`,
		"bidi\u202etxt":          `bidi\u202etxt`,
		`back\slash and "quote"`: `back\slash and "quote"`,
	}
	for in, want := range cases {
		got := SafeKey(in)
		if got != want {
			t.Errorf("SafeKey(%q) = %q, want %q", in, got, want)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Errorf("SafeKey(%q) = %q still holds control character %U", in, got, r)
			}
		}
		if strings.ContainsRune(got, 0x1b) {
			t.Errorf("SafeKey(%q) holds ESC", in)
		}
	}
}

func TestSafeText(t *testing.T) {
	for in, want := range map[string]string{
		`unknown flag: --x "y"`:      `unknown flag: --x "y"`,
		"unknown flag: --x\x1b[2J":   `unknown flag: --x\x1b[2J`,
		"ERR \x1b]52;c;aGk=\x07 ünï": `ERR \x1b]52;c;aGk=\a ünï`,
		"tab\there \xff\xfe end":     `tab\there \xff\xfe end`,
		"zero\u200bwidth \"quoted\"": `zero\u200bwidth "quoted"`,
	} {
		if got := SafeText(in); got != want {
			t.Errorf("SafeText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuoteKey(t *testing.T) {
	for in, want := range map[string]string{
		"rate:user:42": `"rate:user:42"`,
		"a\x1b[2Jb":    `"a\x1b[2Jb"`,
		`say "hi"`:     `"say \"hi\""`,
		"bad\xff":      `"bad\xff"`,
	} {
		if got := QuoteKey(in); got != want {
			t.Errorf("QuoteKey(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestEscapeUnprintable: runes a terminal obeys become \u escapes, the same string to a JSON
// reader; printable text, ASCII and U+FFFD are left as they are.
func TestEscapeUnprintable(t *testing.T) {
	for in, want := range map[string]string{
		`{"key":"plain:ü:日本"}`:       `{"key":"plain:ü:日本"}`,
		"{\"key\":\"c1:\u009b31m\"}": `{"key":"c1:\u009b31m"}`,
		"\"bidi\u202egnp.exe\"":      `"bidi\u202egnp.exe"`,
		"\"iso\u2066x\u2069\"":       `"iso\u2066x\u2069"`,
		"\"ls\u2028ps\u2029\"":       `"ls\u2028ps\u2029"`,
		"\"tag\U000E0041\"":          `"tag\udb40\udc41"`,
		"\"bad\xffbyte\"":            `"bad\u00ffbyte"`,
		"\"repl\ufffd\"":             "\"repl\ufffd\"",
		"a\nb\tc":                    "a\nb\tc",
	} {
		if got := string(EscapeUnprintable([]byte(in))); got != want {
			t.Errorf("EscapeUnprintable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapes: only runes EscapeUnprintable rewrites count; ASCII controls are the
// encoders' own to escape.
func TestEscapes(t *testing.T) {
	for s, want := range map[string]bool{"plain": false, "multi\nline": false, "\x1b[31m": false, "é": false,
		"bidi\u202e": true, "c1\u009b": true, "ls\u2028": true} {
		if got := Escapes(s); got != want {
			t.Errorf("Escapes(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestWidthIsANSIWidth: Width's shortcut for printable ASCII gives ansi.StringWidth's answer
// for every string of one or two bytes and for escapes, wide runes and invalid UTF-8.
func TestWidthIsANSIWidth(t *testing.T) {
	cases := []string{"", "rate:user:42", "\x1b[31mred\x1b[0m", "日本", "é", "\xff\xfe", "a\tb", "x\u200by", "🙂 ok"}
	for a := 0; a < 256; a++ {
		cases = append(cases, string([]byte{byte(a)}))
		for b := 0; b < 256; b += 3 {
			cases = append(cases, string([]byte{byte(a), byte(b)}))
		}
	}
	for _, s := range cases {
		if got, want := Width(s), ansi.StringWidth(s); got != want {
			t.Errorf("Width(%q) = %d, ansi.StringWidth %d", s, got, want)
		}
	}
}
