package bucket

import (
	"fmt"
	"strings"
)

// splitPattern cuts a two-key layout's key pattern at its one '*' (all else is literal).
func splitPattern(p string) (pre, suf string, ok bool) {
	pre, suf, ok = strings.Cut(p, "*")
	return pre, suf, ok && !strings.Contains(suf, "*")
}

// matchPattern is the part of key that the '*' of pattern p stands for (never empty).
func matchPattern(p, key string) (string, bool) {
	pre, suf, ok := splitPattern(p)
	if !ok || len(key) <= len(pre)+len(suf) || !strings.HasPrefix(key, pre) || !strings.HasSuffix(key, suf) {
		return "", false
	}
	return key[len(pre) : len(key)-len(suf)], true
}

func fillPattern(p, part string) string {
	pre, suf, _ := splitPattern(p)
	return pre + part + suf
}

// checkPattern says what is wrong with a key pattern of field, and how to fix it.
func checkPattern(layout, field, p string) error {
	switch n := strings.Count(p, "*"); {
	case p == "":
		return fmt.Errorf("%w: layout %q: a strings layout needs %s, a key pattern with one '*' (e.g. \"*\" and \"*:last_time\")", ErrInvalid, layout, field)
	case n == 0:
		return fmt.Errorf("%w: layout %q: %s %q has no '*': put one '*' where the bucket's name goes (e.g. \"*.tokens\")", ErrInvalid, layout, field, p)
	case n > 1:
		return fmt.Errorf("%w: layout %q: %s %q has %d '*': use exactly one, where the bucket's name goes (braces are literal)", ErrInvalid, layout, field, p, n)
	}
	return nil
}

// TimeKeyOf is the time key of the two-key bucket whose tokens key is key.
func (l Layout) TimeKeyOf(key string) (string, bool) {
	part, ok := matchPattern(l.TokensKey, key)
	if !ok {
		return "", false
	}
	return fillPattern(l.TimeKey, part), true
}

// TokensKeyOf is the tokens key (the bucket's name) of the two-key bucket with time key key.
func (l Layout) TokensKeyOf(key string) (string, bool) {
	part, ok := matchPattern(l.TimeKey, key)
	if !ok {
		return "", false
	}
	return fillPattern(l.TokensKey, part), true
}

// IsTimeKey says key is named as a time key of the (two-key) layout.
func (l Layout) IsTimeKey(key string) bool {
	_, ok := l.TokensKeyOf(key)
	return l.Type == Strings && ok
}

// BucketKey is the tokens key for name in a two-key layout; name itself for others.
func (l Layout) BucketKey(name string) string {
	if l.Type != Strings || l.TokensKey == "" {
		return name
	}
	return fillPattern(l.TokensKey, name)
}
