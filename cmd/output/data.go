package output

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	tformat "github.com/bucketctl/bucketctl/tui/format"
)

// WriteData writes v as JSON (one document, indented) or YAML. The YAML is the JSON
// document written in YAML's block style, so a view's json tags name its fields in both
// formats and the two print the same values in the same order. A rune a terminal would
// obey (a C1 control, a bidi override) is written escaped in both (format.EscapeUnprintable;
// for YAML, see WriteNode).
func WriteData(w io.Writer, format string, v any) error {
	if format == FormatYAML {
		n, err := yamlNode(v)
		if err != nil {
			return err
		}
		return WriteNode(w, n)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(tformat.EscapeUnprintable(buf.Bytes()))
	return err
}

// WriteNode writes a YAML document for a terminal (indented by 2): a scalar holding a rune
// a terminal would obey is double-quoted, the one style where EscapeUnprintable's \u escapes
// are the rune, and written escaped.
func WriteNode(w io.Writer, n *yaml.Node) error {
	quoteUnprintable(n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(tformat.EscapeUnprintable(buf.Bytes()))
	return err
}

// quoteUnprintable double-quotes, in place, every scalar of n EscapeUnprintable would change.
func quoteUnprintable(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && tformat.Escapes(n.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		quoteUnprintable(c)
	}
}

// yamlNode is v's JSON document as a YAML node, in the style yaml.Marshal gives a Go value.
func yamlNode(v any) (*yaml.Node, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return nextNode(dec)
}

// nextNode reads the next JSON value of dec as a YAML node: collections in block style
// (an empty one stays [] or {}), a string quoted only where YAML would read it as
// something else (as yaml.Marshal quotes it), a number as JSON writes it but without an
// exponent: an age of 95442068183.225 ms, not 9.5442068183225e+10.
func nextNode(dec *json.Decoder) (*yaml.Node, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if t == '{' {
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
		}
		for dec.More() {
			c, err := nextNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		_, err := dec.Token() // the closing bracket
		return n, err
	case string:
		return stringNode(t)
	case json.Number:
		s := string(t)
		if strings.ContainsAny(s, "eE") {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				s = strconv.FormatFloat(f, 'f', -1, 64)
			}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Value: s}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
	default: // null
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	}
}

// stringNode is s as yaml.Marshal writes it. Left plain, the encoder quotes a string YAML
// would read as another type and writes lines in literal style; yaml.Marshal also quotes
// what YAML 1.1 reads as a boolean or a sexagesimal number, so a string that could be one
// is styled as yaml.Marshal styles it.
func stringNode(s string) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "on", "off":
	default:
		if !strings.Contains(s, ":") || strings.Trim(s, "0123456789_:.+-") != "" {
			return n, nil
		}
	}
	var e yaml.Node
	if err := e.Encode(s); err != nil {
		return nil, err
	}
	n.Style = e.Style
	return n, nil
}
