// Package selfcmd names the running program as a person would type it in another terminal,
// from any directory: its name on PATH, its path, or the 'go run' that built it.
package selfcmd

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

func Current() string {
	exe, _ := os.Executable()
	bi, _ := debug.ReadBuildInfo()
	wd, _ := os.Getwd()
	return Command(exe, exec.LookPath, bi, wd)
}

// Command names the program at exe: 'go run' of its module, its name on PATH, or its path.
func Command(exe string, lookPath func(string) (string, error), bi *debug.BuildInfo, wd string) string {
	if exe == "" {
		return "bucketctl"
	}
	if GoRun(exe) {
		return goRunCommand(bi, wd)
	}
	name := filepath.Base(exe)
	if p, err := lookPath(name); err == nil && sameFile(p, exe) {
		return strings.TrimSuffix(name, ".exe")
	}
	return shellWord(exe)
}

// GoRun reports whether 'go run' built exe, into go-buildNNN/bNNN/exe/ or the build cache
// (GOCACHE/ab/ab…-d): a path that goes away.
func GoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" && strings.Contains(exe, "go-build") {
		return true
	}
	h, ok := strings.CutSuffix(filepath.Base(dir), "-d")
	return ok && len(h) >= 32 && strings.Trim(h, "0123456789abcdef") == "" && filepath.Base(filepath.Dir(dir)) == h[:2]
}

// goRunCommand is 'go run' of the module from any directory: module@version, else -C its
// source directory above wd.
func goRunCommand(bi *debug.BuildInfo, wd string) string {
	path := "github.com/bucketctl/bucketctl"
	if bi != nil && bi.Main.Path != "" {
		path = bi.Main.Path
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return "go run " + path + "@" + v
		}
	}
	for dir := wd; dir != ""; dir = filepath.Dir(dir) {
		if modulePath(filepath.Join(dir, "go.mod")) == path {
			return "go run -C " + shellWord(dir) + " ."
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return "go run " + path + "@latest"
}

func modulePath(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}

// shellWord quotes p for a POSIX shell when it needs it.
func shellWord(p string) string {
	if strings.ContainsAny(p, " '\"$`\\") {
		return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
	}
	return p
}

func sameFile(a, b string) bool {
	ia, erra := os.Stat(a)
	ib, errb := os.Stat(b)
	return erra == nil && errb == nil && os.SameFile(ia, ib)
}
