package connect

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// checkFields reports the first key of n that names no field of t, with its line and the
// closest known name: a typo is an error, never an ignored setting.
func checkFields(path string, n *yaml.Node, t reflect.Type, where, field string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports a type mismatch
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				return unknownField(path, k, where, fields)
			}
			if err := checkFields(path, v, ft, where, k.Value); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			inner := where
			if where == "" {
				inner = fmt.Sprintf("%s %q", strings.TrimSuffix(field, "s"), n.Content[i].Value)
			}
			if err := checkFields(path, n.Content[i+1], t.Elem(), inner, ""); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			inner := where
			if where == "" {
				inner = fmt.Sprintf("%s %d", strings.TrimSuffix(field, "s"), i+1)
			}
			if err := checkFields(path, c, t.Elem(), inner, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlFields maps a struct's YAML field names to their types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func unknownField(path string, k *yaml.Node, where string, fields map[string]reflect.Type) error {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	in := ""
	if where != "" {
		in = " in " + where
	}
	hint := fmt.Sprintf(" (known: %s)", strings.Join(names, ", "))
	if s := Closest(k.Value, names); s != "" {
		hint = fmt.Sprintf(": did you mean %q?", s)
	}
	if !fieldName(k.Value) {
		// Not a name ("password hunter2"): never quoted.
		return Usagef("config file %s, line %d: a key that names no field%s%s", path, k.Line, in, hint)
	}
	return Usagef("config file %s, line %d: unknown field %q%s%s", path, k.Line, k.Value, in, hint)
}

// Closest returns the candidate nearest to word (edit distance at most 2 and half its
// length, or a prefix either way), or "".
func Closest(word string, candidates []string) string {
	best, bestD := "", min(2, len(word)/2)+1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), c)
		if len(word) >= 3 && (strings.HasPrefix(c, word) || strings.HasPrefix(word, c)) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fieldName says s reads as a field's name (letters, digits, '-', '_'), safe to quote.
func fieldName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
