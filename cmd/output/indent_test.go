package output

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestIndentJSONIsJSONIndent: the stream's indenter writes what json.Indent writes, for
// values with empty and nested objects and arrays, and strings holding brackets, commas,
// colons, quotes and backslashes.
func TestIndentJSONIsJSONIndent(t *testing.T) {
	type inner struct {
		A []int          `json:"a"`
		M map[string]any `json:"m"`
	}
	values := []any{
		map[string]any{},
		[]any{},
		[]any{map[string]any{}, []int{}, nil, true, 1.5, math.MaxInt64},
		map[string]any{"k": `a "quoted" {x}, [y]: \ z`, "e": "", "u": "\u2028\x1b", "n": nil},
		inner{A: []int{1, 2, 3}, M: map[string]any{"x": []any{map[string]any{"y": []string{}}}, "z": "},:"}},
		StateView{},
	}
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, b, "  ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentJSON(nil, b, "  ", "  "); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\ngot  %s\nwant %s", b, got, want.Bytes())
		}
	}
}
