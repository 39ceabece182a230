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

// Current is Command for this process.
func Current() string {
	exe, _ := os.Executable()
	bi, _ := debug.ReadBuildInfo()
	wd, _ := os.Getwd()
	return Command(exe, exec.LookPath, bi, wd)
}

// Command names the program at exe: a 'go run' of its module when 'go run' built it (see
// GoRun), the bare name when PATH finds this very file, else its absolute path (never one
// relative to wd: the command must work from any directory). bi is the program's build
// information, wd the directory it runs in.
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

// GoRun reports whether exe was built by 'go run': into a temporary
// …/go-buildNNN/bNNN/exe/NAME, or (Go 1.24 and later, once built) the build cache's
// GOCACHE/xx/xx…-d/NAME. Either goes away, so its path is no command to suggest.
func GoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) == "exe" && strings.Contains(exe, "go-build") {
		return true
	}
	hash, ok := strings.CutSuffix(filepath.Base(dir), "-d")
	return ok && len(hash) >= 32 && strings.Trim(hash, "0123456789abcdef") == "" &&
		filepath.Base(filepath.Dir(dir)) == hash[:2]
}

// goRunCommand runs the module again with 'go run' from any directory: at its version when
// it was run as module@version, else from its source directory (the module root above
// wd whose go.mod names it) with -C.
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

// modulePath is the module path go.mod at p declares ("" when there is none).
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

// sameFile says a and b are one file, through symbolic links.
func sameFile(a, b string) bool {
	ia, erra := os.Stat(a)
	ib, errb := os.Stat(b)
	return erra == nil && errb == nil && os.SameFile(ia, ib)
}
