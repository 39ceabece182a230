package format

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Unprintable says whether r must never reach a terminal as it is: a control or format
// character (ESC, a bidi override), a line separator, or a byte that is not UTF-8.
func Unprintable(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) }

// EscapeUnprintable rewrites each Unprintable rune at or above U+0080 of JSON or YAML
// output as \uXXXX: a parser reads the same value, a terminal shows it.
func EscapeUnprintable(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r < utf8.RuneSelf || !Unprintable(r) || (r == utf8.RuneError && size == 3):
			if out != nil {
				out = append(out, b[i:i+size]...)
			}
		case out == nil:
			out = append(make([]byte, 0, len(b)+16), b[:i]...)
			fallthrough
		default:
			if r == utf8.RuneError { // a byte that is not UTF-8: its Latin-1 rune
				r = rune(b[i])
			}
			if r1, r2 := utf16.EncodeRune(r); r > 0xFFFF {
				out = appendU(appendU(out, r1), r2)
			} else {
				out = appendU(out, r)
			}
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}

// Escapes reports whether EscapeUnprintable would change s (YAML then double-quotes it).
func Escapes(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf && Unprintable(r) })
}

func appendU(b []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
}

// printableASCII says s is all printable ASCII (space included): shown as it is, a column
// a byte.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Width is s's width on a terminal (ansi.StringWidth, at once for printable ASCII).
func Width(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// SafeKey makes a Redis key safe to show on a terminal: printable text as it is, any other
// key as a Go string literal without its quotes (\x1b, \n, \xff, \u200b).
func SafeKey(key string) string {
	if printableASCII(key) || !strings.ContainsFunc(key, Unprintable) {
		return key
	}
	q := strconv.QuoteToGraphic(key)
	return q[1 : len(q)-1]
}

// SafeText makes free text safe to show on a terminal: each unprintable rune or non-UTF-8
// byte as its Go escape (\x1b, \t, \xff), the rest (quotes too) as it is.
func SafeText(s string) string {
	if !strings.ContainsFunc(s, Unprintable) {
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

// QuoteKey writes a key quoted as Go quotes a string, safe for a terminal: "a\x1bb".
func QuoteKey(key string) string { return SafeKey(strconv.Quote(key)) }

// TruncMiddle cuts plain text s to width cells by replacing its middle with an ellipsis,
// so a key's start and tail both stay: rl:{tenant-4711}:r…/orders.
func TruncMiddle(s string, width int) string {
	w := Width(s)
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

// DeclareHint is the advice that makes a guessed layout writable (layout "": none or
// several were guessed).
func DeclareHint(layout string) string {
	if layout == "" {
		return "declare its layout with --layout or a rule in the config file"
	}
	return "declare --layout " + layout + " or a rule in the config file"
}
