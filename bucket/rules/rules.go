package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
)

// Rule maps the keys matching a Redis glob pattern to a layout, a spec and a cost; a zero
// field leaves its value to the flags, the bucket itself or detection.
type Rule struct {
	Name   string         // reported in a bucket.Target's Source ("rule <Name>")
	Match  string         // a Redis glob pattern (see GlobMatch)
	Layout *bucket.Layout // nil: not set by the rule
	Spec   bucket.Spec    // zero: not set by the rule
	Cost   float64        // the cost a check assumes; 0 (or less): not set by the rule
}

// Table is an ordered table of rules: the first match wins. The nil *Table matches no key.
type Table struct {
	rules []Rule
}

// New checks rules: each needs a pattern, and its spec is zero or valid.
func New(rules []Rule) (*Table, error) {
	for i, r := range rules {
		if r.Match == "" {
			return nil, fmt.Errorf("%w: rule %d has no match pattern", bucket.ErrInvalid, i+1)
		}
		if !r.Spec.IsZero() {
			if err := r.Spec.Validate(); err != nil {
				return nil, fmt.Errorf("rule %q: %w", r.Name, err)
			}
		}
	}
	return &Table{rules: slices.Clone(rules)}, nil
}

// For returns the first rule whose pattern matches key (its Layout is shared: do not change it).
func (rs *Table) For(key string) (Rule, bool) {
	if rs == nil {
		return Rule{}, false
	}
	for _, r := range rs.rules {
		if GlobMatch(r.Match, key) {
			return r, true
		}
	}
	return Rule{}, false
}

// Resolver starts every key's Target from base (the flags) and fills in what base leaves
// open from the key's rule: layout, spec (Source "rule <name>"), and the cost unless costFixed.
func (rs *Table) Resolver(base bucket.Target, costFixed bool) bucket.Resolver {
	return func(key string) bucket.Target {
		t := base
		r, ok := rs.For(key)
		if !ok {
			return t
		}
		if t.Layout == nil && r.Layout != nil {
			l := *r.Layout
			t.Layout = &l
		}
		if t.Spec.IsZero() && !r.Spec.IsZero() {
			t.Spec, t.Source = r.Spec, "rule "+r.Name
		}
		if !costFixed && r.Cost > 0 {
			t.Cost = r.Cost
		}
		return t
	}
}

// GlobMatch reports whether key matches the Redis glob pattern (*, ?, [abc], [^a], [a-z],
// \x) exactly as SCAN MATCH does: byte by byte, * matching newlines too.
func GlobMatch(pattern, key string) bool {
	p, s := pattern, key
	if len(s) == 0 {
		p = strings.TrimLeft(p, "*") // "*" matches the empty key, as SCAN MATCH * does
	}
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i < len(s); i++ {
				if GlobMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false // Redis: no suffix matched
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for len(p) > 0 && p[0] != ']' {
				switch {
				case p[0] == '\\' && len(p) >= 2:
					p = p[1:]
					match = match || p[0] == s[0]
				case len(p) >= 3 && p[1] == '-':
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					match = match || (s[0] >= lo && s[0] <= hi)
					p = p[2:]
				default:
					match = match || p[0] == s[0]
				}
				if len(p) > 1 || p[0] == ']' {
					p = p[1:]
				} else {
					break // an unterminated class ends with the pattern, as in Redis
				}
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		if len(p) > 0 {
			p = p[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
		}
	}
	return len(p) == 0 && len(s) == 0
}

// GlobPrefix is the literal start of a Redis glob: every key it matches starts with it.
func GlobPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// QuoteGlob escapes the Redis glob metacharacters of s (* ? [ ] \).
func QuoteGlob(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
