package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/cmd"
)

// committedCompletions is the repository's completions/ folder, seen from scripts/gen/.
const committedCompletions = "../../completions"

const staleMsg = "completions are stale: run `make gen`"

// env is a process environment for run: the variables given and no others.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// result is what one run of gen gave.
type result struct {
	code   int
	errOut string
}

func gen(getenv func(string) string, args ...string) result {
	var stderr bytes.Buffer
	code := run(args, &stderr, getenv)
	return result{code, stderr.String()}
}

// bucketctl runs the bucketctl command line in-process, as `bucketctl ARGS` does.
func bucketctl(args ...string) (string, int) {
	var out bytes.Buffer
	f := cmd.NewFactory(&cmd.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard}, cmd.VersionInfo{Version: "test"})
	f.Getenv = env("HOME", "/nonexistent")
	code := cmd.Run(context.Background(), f, args)
	return out.String(), code
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// firstDiff names the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: generated %q, committed %q", i+1, gl, wl)
		}
	}
	return "no line differs"
}

// TestCompletionsAreCommitted regenerates the completions and compares them with the
// committed completions/, both ways: a cobra upgrade or a new completion file shows here.
func TestCompletionsAreCommitted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := gen(env(), "--dir", dir, "--man=false"); r.code != exitOK {
		t.Fatalf("gen: exit %d: %s", r.code, r.errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "man")); !os.IsNotExist(err) {
		t.Fatalf("gen --man=false wrote man/ (stat: %v)", err)
	}
	generated := readDir(t, filepath.Join(dir, "completions"))
	committed := readDir(t, committedCompletions)
	if len(generated) != len(completionFiles) {
		t.Fatalf("gen wrote %d completion files, want %d", len(generated), len(completionFiles))
	}
	for name, g := range generated {
		c, ok := committed[name]
		switch {
		case !ok:
			t.Errorf("%s: completions/%s is missing", staleMsg, name)
		case !bytes.Equal(g, c):
			t.Errorf("%s: completions/%s differs, %s", staleMsg, name, firstDiff(g, c))
		}
	}
	for name := range committed {
		if _, ok := generated[name]; !ok {
			t.Errorf("%s: completions/%s is no longer generated", staleMsg, name)
		}
	}
}

// TestCompletionCommandMatchesCommitted: what users get from `bucketctl completion SHELL`
// is the committed file, and the command's help says how to install it.
func TestCompletionCommandMatchesCommitted(t *testing.T) {
	t.Parallel()
	committed := readDir(t, committedCompletions)
	for shell, file := range map[string]string{"bash": "bucketctl.bash", "zsh": "bucketctl.zsh",
		"fish": "bucketctl.fish", "powershell": "bucketctl.ps1"} {
		out, code := bucketctl("completion", shell)
		if code != cmd.ExitOK || out != string(committed[file]) {
			t.Errorf("completion %s: exit %d, output differs from completions/%s: %s", shell, code, file,
				firstDiff([]byte(out), committed[file]))
		}
	}
	help, _ := bucketctl("completion", "--help")
	for _, want := range []string{"Examples:", "source <(bucketctl completion bash)",
		"~/.local/share/bash-completion/completions/bucketctl", "bucketctl completion zsh >",
		"bucketctl completion fish >", "bucketctl completion powershell |"} {
		if !strings.Contains(help, want) {
			t.Errorf("completion --help lacks %q:\n%s", want, help)
		}
	}
	if root, _ := bucketctl("--help"); !strings.Contains(root, "completion") {
		t.Errorf("root help should list completion:\n%s", root)
	}
}

var thLine = regexp.MustCompile(`(?m)^\.TH "([A-Z\\-]+)" "1" "([^"]*)" "([^"]*)" "([^"]*)"$`)

// TestGenManPages: one page per visible command and help topic, reproducible (the same
// bytes on another machine with another HOME), dated by --man-date, never the clock.
func TestGenManPages(t *testing.T) {
	t.Parallel()
	home := env("HOME", "/home/gen", "XDG_CONFIG_HOME", "/home/gen/.cfg")
	pagesWith := func(getenv func(string) string, args ...string) map[string][]byte {
		t.Helper()
		dir := t.TempDir()
		if r := gen(getenv, append([]string{"--dir", dir}, args...)...); r.code != exitOK {
			t.Fatalf("gen %v: exit %d: %s", args, r.code, r.errOut)
		}
		return readDir(t, filepath.Join(dir, "man"))
	}
	args := []string{"--man-date", "2024-03-05", "--man-version", "1.2.3"}
	pages := pagesWith(home, args...)

	var names []string
	for n := range pages {
		names = append(names, n)
	}
	for _, want := range []string{"bucketctl.1", "bucketctl-inspect.1", "bucketctl-script-load.1",
		"bucketctl-completion-bash.1", "bucketctl-exit-codes.1", "bucketctl-version.1"} {
		if !slices.Contains(names, want) {
			t.Errorf("no man page %s among %v", want, names)
		}
	}
	for _, n := range names {
		if strings.Contains(n, "gen") || strings.Contains(n, "__complete") || strings.Contains(n, "help") {
			t.Errorf("man page %s is for a hidden command", n)
		}
	}

	configDir := home("XDG_CONFIG_HOME")
	for n, p := range pages {
		m := thLine.FindSubmatch(p)
		if m == nil {
			t.Errorf("%s: no .TH header:\n%.200s", n, p)
			continue
		}
		if string(m[2]) != "Mar 2024" || string(m[3]) != "bucketctl 1.2.3" || string(m[4]) != "bucketctl manual" {
			t.Errorf("%s: header %q", n, m[0])
		}
		if bytes.Contains(p, []byte(configDir)) || bytes.Contains(p, []byte("Auto generated")) {
			t.Errorf("%s depends on the generating machine (%s) or names the generator", n, configDir)
		}
	}
	root := string(pages["bucketctl.1"])
	for _, want := range []string{`~/.config/bucketctl/config.yaml`, `BUCKETCTL_<FLAG> (dashes`, `host:port[,host:port] (instead of --url)`} {
		if !strings.Contains(root, want) {
			t.Errorf("bucketctl.1 lacks %q (markdown ate it?)", want)
		}
	}
	if exit := string(pages["bucketctl-exit-codes.1"]); !strings.Contains(exit, ".EX") || !strings.Contains(exit, "130  interrupted") {
		t.Errorf("exit-codes table not kept as it is:\n%s", exit)
	}

	for n, p := range pagesWith(env("HOME", "/elsewhere", "XDG_CONFIG_HOME", "/elsewhere/x"), args...) {
		if !bytes.Equal(p, pages[n]) {
			t.Errorf("%s differs when generated with another HOME: %s", n, firstDiff(p, pages[n]))
		}
	}

	for n, z := range pagesWith(home, append(args, "--man-gzip")...) {
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, pages[strings.TrimSuffix(n, ".gz")]) || !zr.ModTime.IsZero() || zr.Name != "" {
			t.Errorf("%s: not the gzip of %s without name and time (err %v, mtime %v, name %q)",
				n, strings.TrimSuffix(n, ".gz"), err, zr.ModTime, zr.Name)
		}
	}

	epoch := env("HOME", "/home/gen", "XDG_CONFIG_HOME", "/home/gen/.cfg", "SOURCE_DATE_EPOCH", "1709596800") // 2024-03-05
	if p := pagesWith(epoch, "--man-version", "1.2.3")["bucketctl.1"]; !bytes.Equal(p, pages["bucketctl.1"]) {
		t.Errorf("SOURCE_DATE_EPOCH gives another page: %s", firstDiff(p, pages["bucketctl.1"]))
	}
	if p := pagesWith(epoch)["bucketctl.1"]; !bytes.Contains(p, []byte(`"bucketctl dev"`)) {
		t.Errorf("--man-version does not default to dev:\n%.200s", p)
	}
}

// TestGenRemovesStaleManPages: a page of a command that is gone is removed; other files stay.
func TestGenRemovesStaleManPages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	man := filepath.Join(dir, "man")
	for _, n := range []string{"bucketctl-gone.1", "bucketctl-gone.1.gz", "other.1", "bucketctl-notes.txt"} {
		if err := os.MkdirAll(man, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(man, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if r := gen(env(), "--dir", dir, "--man-date", "2024-03-05"); r.code != exitOK {
		t.Fatalf("gen: exit %d: %s", r.code, r.errOut)
	}
	files := readDir(t, man)
	for n, keep := range map[string]bool{"bucketctl-gone.1": false, "bucketctl-gone.1.gz": false,
		"other.1": true, "bucketctl-notes.txt": true, "bucketctl.1": true} {
		if _, ok := files[n]; ok != keep {
			t.Errorf("%s: present %v, want %v", n, ok, keep)
		}
	}
}

func TestGenFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "needs --dir"},
		{[]string{"--dir", t.TempDir()}, "--man-date YYYY-MM-DD or set SOURCE_DATE_EPOCH"},
		{[]string{"--dir", t.TempDir(), "--man-date", "5 March"}, `--man-date "5 March"`},
		{[]string{"--dir", t.TempDir(), "--man=false", "extra"}, "takes no arguments"},
		{[]string{"--dri", "x"}, "flag provided but not defined: -dri"},
	} {
		if r := gen(env(), tc.args...); r.code != exitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want %d and %q", tc.args, r.code, r.errOut, exitUsage, tc.want)
		}
	}
	if r := gen(env("SOURCE_DATE_EPOCH", "yesterday"), "--dir", t.TempDir()); r.code != exitUsage || !strings.Contains(r.errOut, "SOURCE_DATE_EPOCH") {
		t.Errorf("bad SOURCE_DATE_EPOCH: exit %d %q", r.code, r.errOut)
	}

	got, err := parse([]string{"--dir", "out", "--man-date", "2024-03-05T23:30:00-02:00", "--man-gzip", "--man-version", "9.9.9"}, io.Discard, env())
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2024, 3, 6, 1, 30, 0, 0, time.UTC)
	if got.Dir != "out" || !got.Man || !got.ManGzip || !got.ManDate.Equal(want) || got.ManVersion != "9.9.9" || got.Root == nil {
		t.Errorf("parsed %+v", got)
	}
}

// TestManPagesHaveEveryHelpTopic: each topic 'bucketctl help' lists is a man page of its
// own, holding the topic's text.
func TestManPagesHaveEveryHelpTopic(t *testing.T) {
	dir := t.TempDir()
	if r := gen(env("HOME", "/nonexistent"), "--dir", dir, "--man-date", "2024-03-05"); r.code != exitOK {
		t.Fatalf("gen: exit %d: %s", r.code, r.errOut)
	}
	pages := readDir(t, filepath.Join(dir, "man"))
	out, code := bucketctl("help")
	_, list, ok := strings.Cut(out, "Additional help topics:\n")
	if code != 0 || !ok {
		t.Fatalf("bucketctl help (exit %d) lists no topics:\n%s", code, out)
	}
	var topics []string
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "bucketctl" {
			break
		}
		topics = append(topics, f[1])
	}
	if len(topics) < 8 || !slices.Contains(topics, "exit-codes") || !slices.Contains(topics, "environment") {
		t.Fatalf("topics listed: %v", topics)
	}
	word := regexp.MustCompile(`[A-Za-z]{5,}`)
	for _, topic := range topics {
		text, code := bucketctl("help", topic)
		page, ok := pages["bucketctl-"+topic+".1"]
		if code != 0 || !ok {
			t.Errorf("topic %s: help exit %d, man page present %v", topic, code, ok)
			continue
		}
		// The topic's words, in order, in the page (the renderer escapes punctuation).
		words := word.FindAllString(text, -1)
		rest := string(page)
		for _, w := range words {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("man page of %s lacks %q (of its topic's %d words)", topic, w, len(words))
				break
			}
			rest = rest[i+len(w):]
		}
	}
}
