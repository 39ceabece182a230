package cmd

import (
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
)

// TestRegistryPresetsInHelpAndCompletion: every preset of the layout registry is in 'help
// layouts' (its row and its fidelity row), in inspect --help and in the completion of
// --layout, with no file but its own layout file naming it: the lists are the registry's.
func TestRegistryPresetsInHelpAndCompletion(t *testing.T) {
	t.Parallel()
	topic := run(t, "", "help", "layouts")
	inspect := run(t, "", "inspect", "--help")
	comp := run(t, "", "__complete", "inspect", "--layout", "")
	if topic.code != 0 || inspect.code != 0 || comp.code != 0 {
		t.Fatalf("help layouts: exit %d; inspect --help: exit %d; __complete: exit %d %s", topic.code, inspect.code, comp.code, comp.errOut)
	}
	if strings.Contains(topic.out, "{{") {
		t.Fatalf("help layouts holds a placeholder: %s", topic.out)
	}
	completed := map[string]bool{}
	for _, l := range strings.Split(comp.out, "\n") {
		completed[strings.TrimSpace(l)] = true
	}
	presets := bucket.Registry()
	if len(presets) < 8 {
		t.Fatalf("the registry holds %d presets", len(presets))
	}
	for _, l := range presets {
		row := "  " + l.Name + " "
		about := strings.Fields(l.About)
		if n := strings.Count(topic.out, "\n"+row); n < 2 || len(about) == 0 || !strings.Contains(lineOf(topic.out, "  "+l.Name), about[0]) {
			t.Errorf("help layouts: preset %s in %d tables, want its About's row and its fidelity row", l.Name, n)
		}
		if line := lineOf(inspect.out, "  "+l.Name); len(about) == 0 || !strings.Contains(line, about[0]) {
			t.Errorf("inspect --help: no row for preset %s with its About", l.Name)
		}
		if !completed[l.Name] {
			t.Errorf("completion of --layout lacks preset %s: %q", l.Name, comp.out)
		}
	}
}
