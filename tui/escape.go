package tui

import (
	"strconv"
	"unicode"
	"unicode/utf8"
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
