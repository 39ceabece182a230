package format

import (
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Unprintable says whether r must never reach a terminal as it is: a control or format
// character (ESC, a C1 control such as U+009B, a bidi override such as U+202E), a line or
// paragraph separator, or a byte that is not UTF-8 (decoded as utf8.RuneError). Every
// output writes such a rune escaped: SafeKey and SafeText for text, EscapeUnprintable for
// JSON and YAML.
func Unprintable(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) }

// EscapeUnprintable rewrites each rune of b at or above U+0080 that is Unprintable as
// \uXXXX (a surrogate pair above U+FFFF), leaving every other byte as it is. In JSON (whose
// structure is ASCII, so such a rune can only stand inside a string) and in a YAML
// double-quoted scalar the escape is the same string; what reads b gets the same value,
// and a terminal shows it instead of obeying it.
func EscapeUnprintable(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			if out != nil {
				out = append(out, b[i])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if !Unprintable(r) || (r == utf8.RuneError && size == 3) {
			if out != nil {
				out = append(out, b[i:i+size]...)
			}
			i += size
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
		}
		if r == utf8.RuneError { // a byte that is not UTF-8: its Latin-1 rune
			r = rune(b[i])
		}
		if r > 0xFFFF {
			r1, r2 := utf16.EncodeRune(r)
			out = appendU(appendU(out, r1), r2)
		} else {
			out = appendU(out, r)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// Escapes reports whether EscapeUnprintable would change s: a YAML writer double-quotes
// such a string, the one style where the \u escapes mean the rune.
func Escapes(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && Unprintable(r) {
			return true
		}
	}
	return false
}

func appendU(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
}

// SafeKey makes a Redis key name safe to show on a terminal. A key is binary-safe in Redis
// and may hold escape sequences that clear the screen, retitle the window or set the
// clipboard (OSC 52) of the operator who lists it. A key of printable text is returned as it
// is; any other key is written as a Go string literal without its quotes (\x1b, \n, \xff,
// \u200b), so every byte is visible and none is interpreted by the terminal.
func SafeKey(key string) string {
	for _, r := range key {
		if Unprintable(r) {
			q := strconv.QuoteToGraphic(key)
			return q[1 : len(q)-1]
		}
	}
	return key
}

// SafeText makes free text (an error message that may quote a user's input or a server's
// reply) safe to show on a terminal: each rune that is not printable, and each byte that is
// not UTF-8, is written as its Go escape (\x1b, \t, \xff); the rest is left as it is, quotes
// included.
func SafeText(s string) string {
	clean := true
	for _, r := range s {
		if Unprintable(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b = append(b, `\x`...)
			b = append(b, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&15])
		case !unicode.IsPrint(r):
			q := strconv.QuoteRuneToGraphic(r)
			b = append(b, q[1:len(q)-1]...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// QuoteKey writes a key in double quotes, as Go quotes a string, safe for a terminal:
// "rate:user:42", "a\x1bb".
func QuoteKey(key string) string { return SafeKey(strconv.Quote(key)) }

// TruncMiddle cuts s to at most width cells by replacing its middle with an ellipsis, so
// both the start and the end of a key stay: keys of one family differ in their tail
// (rl:{tenant-4711}:r…/orders, rl:{tenant-4711}:r…/users). s is plain text (pass a key
// through SafeKey first); the tail keeps the larger half.
func TruncMiddle(s string, width int) string {
	w := ansi.StringWidth(s)
	switch {
	case w <= width:
		return s
	case width <= 0:
		return ""
	case width == 1:
		return "…"
	}
	head := (width - 1) / 2
	tail := width - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, w-tail, "")
}
