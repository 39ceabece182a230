package connect

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

const MaxConfigSize = 1 << 20

// readNode parses the config file's one YAML document, a mapping (nil when empty); a file
// that is not regular or over MaxConfigSize is refused before a byte is read.
func readNode(path string) (*yaml.Node, error) {
	tooBig := Usagef("config file %s: over the limit of 1 MiB: it must be a YAML file of at most 1 MiB (point --config at one)", path)
	check := func(st fs.FileInfo, err error) error {
		switch {
		case err != nil:
			return err
		case !st.Mode().IsRegular():
			return Usagef("config file %s: not a regular file (%s): it must be a YAML file of at most 1 MiB (point --config at one)", path, fileKind(st.Mode()))
		case st.Size() > MaxConfigSize:
			return tooBig
		}
		return nil
	}
	if err := check(os.Stat(path)); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := check(f.Stat()); err != nil { // replaced since
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err == nil && len(data) > MaxConfigSize {
		err = tooBig
	}
	if err != nil {
		return nil, err
	}
	return parseNode(path, data)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

func parseNode(path string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 0; ; i++ {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Usagef("config file %s: %s (fix the YAML or point --config elsewhere)", path, yamlErrText(err))
		}
		if i == 0 {
			root = next
		} else if len(next.Content) > 0 && next.Content[0].Tag != "!!null" {
			return nil, Usagef("config file %s, line %d: a second YAML document: the file holds one (remove the '---' and what follows, or merge them)", path, next.Content[0].Line)
		}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode && !(doc.Kind == yaml.ScalarNode && doc.Tag == "!!null") {
		return nil, Usagef("config file %s, line %d: want a mapping of current-context, contexts, layouts and rules", path, doc.Line)
	}
	return doc, nil
}

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
	case reflect.Map, reflect.Slice: // an entry is named by its key, an item by its number
		want, step := yaml.MappingNode, 2
		if t.Kind() == reflect.Slice {
			want, step = yaml.SequenceNode, 1
		}
		if n.Kind != want {
			return nil
		}
		for i := 0; i+step <= len(n.Content); i += step {
			inner := where
			if name := strconv.Quote(n.Content[i].Value); where == "" {
				if step == 1 {
					name = strconv.Itoa(i + 1)
				}
				inner = strings.TrimSuffix(field, "s") + " " + name
			}
			if err := checkFields(path, n.Content[i+step-1], t.Elem(), inner, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.IsExported() && name != "-" {
			out[cmp.Or(name, strings.ToLower(f.Name))] = f.Type
		}
	}
	return out
}

func unknownField(path string, k *yaml.Node, where string, fields map[string]reflect.Type) error {
	names := slices.Sorted(maps.Keys(fields))
	in := ""
	if where != "" {
		in = " in " + where
	}
	hint := fmt.Sprintf(" (known: %s)", strings.Join(names, ", "))
	if s := Closest(k.Value, names); s != "" {
		hint = fmt.Sprintf(": did you mean %q?", s)
	}
	if !fieldName().MatchString(k.Value) { // "password hunter2" is never quoted
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

// fieldName matches a key that reads as a field's name, safe to quote.
var fieldName = lazyRegexp(`^[A-Za-z0-9_-]{1,40}$`)
