package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestTreeForArgs: a run builds only the command its words name, wherever the root's flags
// stand, and the whole tree when they name none or need it all (help, completion).
func TestTreeForArgs(t *testing.T) {
	t.Parallel()
	io, _, _, _ := testStreams()
	names := func(args ...string) []string {
		var got []string
		for _, c := range newCmdRootFor(newTestFactory(t, io, VersionInfo{}), args).Commands() {
			got = append(got, c.Name())
		}
		return got
	}
	for _, args := range [][]string{
		{"inspect", "k"},
		{"--url", "redis://127.0.0.1:1", "inspect", "k"},
		{"--timeout", "1s", "--no-color", "inspect", "k", "--url", "x"},
		{"--url=redis://127.0.0.1:1", "inspect", "--help"},
	} {
		if got := names(args...); !slices.Equal(got, []string{"inspect"}) {
			t.Errorf("%q built %v, want [inspect]", args, got)
		}
	}
	if got := names("config", "view"); !slices.Equal(got, []string{"config"}) {
		t.Errorf("config view built %v", got)
	}
	for _, args := range [][]string{nil, {"--help"}, {"help", "inspect"}, {"completion", "bash"},
		{"__complete", "ins"}, {"inspct"}, {"--url", "x"}} {
		if got := names(args...); len(got) != len(commands()) {
			t.Errorf("%q built %d commands, want all %d", args, len(got), len(commands()))
		}
	}
}

// TestTreeHelpIsTheWholeTreesHelp: every command's help, and its errors, read the same
// from the one-command tree a run builds as from the whole tree.
func TestTreeHelpIsTheWholeTreesHelp(t *testing.T) {
	t.Parallel()
	full := NewCmdRoot(newTestFactory(t, &IOStreams{}, VersionInfo{Version: "test"}))
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(slices.Clone(path), sub.Name())
			paths = append(paths, p)
			walk(sub, p)
		}
	}
	walk(full, nil)
	if len(paths) < len(commands())+5 {
		t.Fatalf("only %d command paths", len(paths))
	}
	for _, p := range paths {
		for _, args := range [][]string{append(slices.Clone(p), "--help"), append(slices.Clone(p), "--zzzzzz")} {
			lean := run(t, "", args...)
			io, _, out, errOut := testStreams()
			root := NewCmdRoot(newTestFactory(t, io, VersionInfo{Version: "test"}))
			root.SetArgs(args)
			root.SetOut(out)
			root.SetErr(errOut)
			err := root.Execute()
			if lean.out != out.String() {
				t.Errorf("%q: the one-command tree prints\n%s\nthe whole tree\n%s", args, lean.out, out.String())
			}
			if (err == nil) != (lean.code == ExitOK) || (err != nil && !strings.Contains(lean.errOut, "--zzzzzz")) {
				t.Errorf("%q: whole tree %v, one-command tree exit %d %q", args, err, lean.code, lean.errOut)
			}
		}
	}
}
