package selfcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestCommand: the name on PATH when PATH finds this very file, else its path; a 'go run'
// build (a temporary directory or the build cache) is run again with 'go run', at the
// module's version or from its source directory with -C, from any directory.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bucketctl")
	other := filepath.Join(t.TempDir(), "bucketctl")
	for _, p := range []string{exe, other} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module github.com/bucketctl/bucketctl\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(src, "cmd")
	finds := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	notFound := func(string) (string, error) { return "", os.ErrNotExist }
	devel := &debug.BuildInfo{Main: debug.Module{Path: "github.com/bucketctl/bucketctl", Version: "(devel)"}}
	tagged := &debug.BuildInfo{Main: debug.Module{Path: "github.com/bucketctl/bucketctl", Version: "v1.4.0"}}
	cached := "/home/u/.cache/go-build/c7/c784239f5f9385516bbd7a48d65d448eb4f55fbf94ed14bd049ee6bfb14b124a-d/bucketctl"
	for _, c := range []struct {
		exe  string
		look func(string) (string, error)
		bi   *debug.BuildInfo
		wd   string
		want string
	}{
		{"/tmp/go-build1234/b001/exe/bucketctl", notFound, devel, src, "go run -C " + src + " ."},
		{cached, notFound, devel, sub, "go run -C " + src + " ."}, // from a subdirectory of the module
		{cached, notFound, tagged, "/", "go run github.com/bucketctl/bucketctl@v1.4.0"},
		{cached, notFound, devel, "/", "go run github.com/bucketctl/bucketctl@latest"}, // no source found
		{exe, finds(exe), devel, "/", "bucketctl"},
		{exe, finds(other), devel, "/", exe}, // another bucketctl comes first on PATH
		{"/opt/my tools/bucketctl", notFound, devel, "/", "'/opt/my tools/bucketctl'"},
		{"", notFound, devel, "/", "bucketctl"},
		{filepath.Join(src, "bin", "bucketctl"), notFound, devel, src, filepath.Join(src, "bin", "bucketctl")}, // absolute: from any directory
		{"/home/u/.cache/go-build/zz/c784239f5f9385516bbd7a48d65d448e-d/bucketctl", notFound, devel, "/", "/home/u/.cache/go-build/zz/c784239f5f9385516bbd7a48d65d448e-d/bucketctl"},
	} {
		if got := Command(c.exe, c.look, c.bi, c.wd); got != c.want {
			t.Errorf("Command(%q, wd %s) = %q, want %q", c.exe, c.wd, got, c.want)
		}
	}
}

// TestUnderGoRun runs a program with 'go run' (the Go in go.mod), twice, so that the
// second run's executable may come from the build cache, and from a subdirectory of the
// module: each time it names a 'go run' with -C and the module's root, a command that
// works from any directory.
func TestUnderGoRun(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	want := "go run -C " + root + " ."
	for i, dir := range []string{root, root, filepath.Join(root, "cmd")} {
		c := exec.Command(goTool, "run", "./"+strings.TrimPrefix(filepath.ToSlash(mustRel(t, dir, "testdata/probe")), "./"))
		c.Dir = dir
		out, err := c.CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("go run (%d, in %s): %v: %q, want %q", i+1, dir, err, got, want)
		}
	}
}

func mustRel(t *testing.T, dir, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}
