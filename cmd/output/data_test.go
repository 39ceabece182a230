package output

import (
	"bytes"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestYAMLStylesStringsAsYAMLMarshal: YAML written through the JSON document quotes a
// string exactly where yaml.Marshal quotes it, so no value reads back as another type.
func TestYAMLStylesStringsAsYAMLMarshal(t *testing.T) {
	for _, s := range []string{"", "rl:user:1", "yes", "No", "on", "OFF", "y", "true", "null", "~", "123", "1.5",
		"0x1F", "1:20", "190:20:30.15", "127.0.0.1:6379", "2024-01-01T10:00:00Z", "a: b", "- x", "#c", "multi\nline",
		" lead", "trail ", "é", "{x}", "*a", "'s", "\"t", ".inf", "-", "1e5", "a #b", "\x1b[31m"} {
		var got bytes.Buffer
		if err := WriteData(&got, FormatYAML, struct {
			V string `json:"v"`
		}{s}); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := yaml.NewEncoder(&want)
		enc.SetIndent(2)
		if err := enc.Encode(struct {
			V string `yaml:"v"`
		}{s}); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%q: got\n%s\nwant (yaml.Marshal)\n%s", s, got.String(), want.String())
		}
	}
}

// TestYAMLFollowsJSON: the YAML has the json tags' names in the struct's order, embedded
// fields inline, plain numbers, and empty collections as [] and {}.
func TestYAMLFollowsJSON(t *testing.T) {
	type inner struct {
		A float64 `json:"a_ms"`
	}
	v := struct {
		Z string `json:"z"`
		inner
		Big  float64           `json:"big"`
		Tiny float64           `json:"tiny"`
		None *float64          `json:"none"`
		Skip string            `json:"skip,omitempty"`
		List []int             `json:"list"`
		Map  map[string]string `json:"map"`
		Seq  []string          `json:"seq"`
	}{Z: "k", inner: inner{A: 1.5}, Big: 95442068183.225e3, Tiny: 1e-7, List: []int{}, Map: map[string]string{}, Seq: []string{"b", "a"}}
	var got bytes.Buffer
	if err := WriteData(&got, FormatYAML, v); err != nil {
		t.Fatal(err)
	}
	want := `z: k
a_ms: 1.5
big: 95442068183225
tiny: 0.0000001
none: null
list: []
map: {}
seq:
  - b
  - a
`
	if got.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", got.String(), want)
	}
}
