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

// WriteData writes v as indented JSON, or as that JSON document in YAML's block style (one
// set of json tags for both); runes a terminal would obey are escaped.
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

// WriteJSONLine writes v as one line of JSON (unprintable runes escaped, as WriteData).
func WriteJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(tformat.EscapeUnprintable(b), '\n'))
	return err
}

// WriteNode writes a YAML document for a terminal: a scalar holding a rune a terminal would
// obey is double-quoted and escaped.
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

// nextNode reads dec's next JSON value as a YAML node, numbers without an exponent.
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

// stringNode is s as yaml.Marshal writes it (YAML 1.1's booleans and sexagesimals quoted).
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
