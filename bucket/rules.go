package bucket

import (
	"fmt"
	"regexp"
	"strings"
)

// Rule maps the keys matching a Redis glob pattern to a layout and a spec, like a line of
// a rate-limit rules table. A zero field leaves its value to the caller's flags, the bucket
// itself or detection.
type Rule struct {
	// Name names the rule where a Target's Source reports it ("rule <Name>").
	Name string
	// Match is a Redis glob pattern: * and ? (any run, any one character), [abc], [a-z],
	// [^a] and \x (x itself).
	Match string
	// Layout is the layout of the matching keys; nil: not set by the rule.
	Layout *Layout
	// Spec is their capacity and rate; zero: not set by the rule.
	Spec Spec
	// Cost is the cost a check assumes for them; 0 (or less): not set by the rule.
	Cost float64
}

// Rules is an ordered table of rules: the first rule whose pattern matches a key wins. The
// nil *Rules matches no key.
type Rules struct {
	rules []Rule
	globs []*regexp.Regexp
}

// NewRules compiles the patterns of rules, in order. A rule needs a pattern, and its spec
// is zero or valid.
func NewRules(rules []Rule) (*Rules, error) {
	rs := &Rules{rules: make([]Rule, len(rules)), globs: make([]*regexp.Regexp, len(rules))}
	for i, r := range rules {
		if r.Match == "" {
			return nil, fmt.Errorf("%w: rule %d has no match pattern", ErrInvalid, i+1)
		}
		if !r.Spec.IsZero() {
			if err := r.Spec.Validate(); err != nil {
				return nil, fmt.Errorf("rule %q: %w", r.Name, err)
			}
		}
		rs.rules[i], rs.globs[i] = r, globRegexp(r.Match)
	}
	return rs, nil
}

// For returns the first rule whose pattern matches key. The rule's Layout is shared: do
// not change it.
func (rs *Rules) For(key string) (Rule, bool) {
	if rs == nil {
		return Rule{}, false
	}
	for i, re := range rs.globs {
		if re.MatchString(key) {
			return rs.rules[i], true
		}
	}
	return Rule{}, false
}

// Resolver returns the Resolver that starts every key's Target from base (what the caller's
// flags say) and fills in what base leaves open from the first rule matching the key: the
// layout when base has none, the spec (and Source "rule <name>") when base's is zero, and
// the cost when the rule sets one, unless costFixed (the caller's cost was given
// explicitly).
func (rs *Rules) Resolver(base Target, costFixed bool) Resolver {
	return func(key string) Target {
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

// globRegexp compiles a Redis glob (*, ?, [abc], [^a], \x) to an anchored regexp.
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
			}
		case '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+j]
			if strings.HasPrefix(class, "^") {
				class = "^" + regexp.QuoteMeta(class[1:])
			} else {
				class = regexp.QuoteMeta(class)
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\-`, "-") + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^" + regexp.QuoteMeta(glob) + "$")
	}
	return re
}

// QuoteGlob escapes the Redis glob metacharacters of s (* ? [ ] \), so that a pattern
// built from it matches s literally: QuoteGlob(prefix) + "*" matches the keys starting
// with prefix.
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
