package format

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// SafeKey makes a Redis key name safe to show on a terminal. A key is binary-safe in Redis
// and may hold escape sequences that clear the screen, retitle the window or set the
// clipboard (OSC 52) of the operator who lists it. A key of printable text is returned as it
// is; any other key is written as a Go string literal without its quotes (\x1b, \n, \xff,
// \u200b), so every byte is visible and none is interpreted by the terminal.
func SafeKey(key string) string {
	for _, r := range key {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
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
		if r == utf8.RuneError || !unicode.IsPrint(r) {
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
