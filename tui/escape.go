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
