package format

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImportsAsDocumented keeps the package doc true: beside the standard library the
// package imports only charmbracelet/x/ansi, no TUI framework or styles.
func TestImportsAsDocumented(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && path != "github.com/charmbracelet/x/ansi" {
				t.Errorf("%s imports %s: the package doc says only charmbracelet/x/ansi beside the standard library", name, path)
			}
		}
	}
}
