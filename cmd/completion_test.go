package cmd

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// bashCompletionLib is where Debian's bash-completion package keeps its library.
const bashCompletionLib = "/usr/share/bash-completion/bash_completion"

// bashComplete sources the committed bash completion, fills COMP_LINE, COMP_POINT,
// COMP_WORDS and COMP_CWORD as bash does on TAB, calls the function registered for
// bucketctl (which runs `bucketctl __complete ...` from PATH) and prints COMPREPLY.
//
// The generated script needs bash-completion's _get_comp_words_by_ref. Mode
// "bash-completion" loads the real library; mode "stand-in" defines that one function,
// reading the words off COMP_LINE as the library does for `-n =:` (":" and "=" stay
// inside words).
const bashComplete = `
source "$1" || exit 90
mode=$2
shift 2
if [[ $mode == bash-completion ]]; then
	source ` + bashCompletionLib + ` || exit 91
	declare -F _init_completion >/dev/null || exit 92
else
	_get_comp_words_by_ref() {
		local line=${COMP_LINE:0:COMP_POINT}
		read -ra words <<<"$line"
		if [[ -z $line || $line == *[[:space:]] ]]; then words+=(""); fi
		cword=$((${#words[@]} - 1))
		cur=${words[cword]}
		prev=${words[cword-1]}
	}
fi
spec=$(complete -p bucketctl) || exit 93
fn=${spec##*-F }
fn=${fn%% *}
COMP_LINE=$1
COMP_POINT=${#COMP_LINE}
COMP_CWORD=$2
shift 2
COMP_WORDS=("$@")
COMP_TYPE=9
COMP_KEY=9
COLUMNS=100 # as in a terminal 100 wide: room for descriptions
"$fn" bucketctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
`

// compWords splits a command line into COMP_WORDS as bash does with the default
// COMP_WORDBREAKS: blanks separate words, and a run of the other break characters
// (":", "=", "@", ...) is a word of its own. A line ending in a blank gets an empty
// last word. It returns the words and the index of the last one (COMP_CWORD).
func compWords(line string) ([]string, int) {
	const blanks, breaks = " \t\n", `"'@><=;|&(:`
	var words []string
	var cur strings.Builder
	inBreak := false
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range line {
		switch {
		case strings.ContainsRune(blanks, r):
			flush()
			inBreak = false
		case strings.ContainsRune(breaks, r):
			if !inBreak {
				flush()
			}
			cur.WriteRune(r)
			inBreak = true
		default:
			if inBreak {
				flush()
			}
			cur.WriteRune(r)
			inBreak = false
		}
	}
	if cur.Len() > 0 {
		flush()
	} else {
		words = append(words, "")
	}
	return words, len(words) - 1
}

func TestCompWords(t *testing.T) {
	t.Parallel()
	words, cword := compWords("bucketctl --url redis://127.0.0.1:6379 inspect rate:u")
	want := []string{"bucketctl", "--url", "redis", ":", "//127.0.0.1", ":", "6379", "inspect", "rate", ":", "u"}
	if !slices.Equal(words, want) || cword != len(want)-1 {
		t.Errorf("compWords = %q, %d", words, cword)
	}
	if words, cword := compWords("bucketctl -o "); !slices.Equal(words, []string{"bucketctl", "-o", ""}) || cword != 2 {
		t.Errorf("trailing blank: %q, %d", words, cword)
	}
}

// TestBashCompletesFromTheBuiltBinary drives the generated bash completion the way bash
// does on TAB, against the built binary: verbs, flags, flag values, contexts from the
// config file, and key names from a live Redis.
func TestBashCompletesFromTheBuiltBinary(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed to test the bash completion: %v", err)
	}
	bin := buildBinary(t) // before isolate: go build needs the real HOME (module cache)
	isolate(t)
	script, err := filepath.Abs(filepath.Join("..", "completions", "bucketctl.bash"))
	if err != nil {
		t.Fatal(err)
	}

	xdg := os.Getenv("XDG_CONFIG_HOME")
	if err := os.MkdirAll(filepath.Join(xdg, "bucketctl"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := "current-context: local\ncontexts:\n  local: {url: \"redis://127.0.0.1:1\"}\n  prod: {url: \"redis://127.0.0.1:2\"}\n  staging: {url: \"redis://127.0.0.1:3\"}\n"
	if err := os.WriteFile(filepath.Join(xdg, "bucketctl", "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	srv := redistest.Start(t)
	c := srv.Client(t)
	for _, k := range []string{"rate:user:1", "rate:user:2", "rate:ip:1", "other:user:3"} {
		if err := c.HSet(context.Background(), k, "tokens", "5", "ts", "1").Err(); err != nil {
			t.Fatal(err)
		}
	}

	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	complete := func(t *testing.T, mode, line string) []string {
		t.Helper()
		words, cword := compWords(line)
		args := append([]string{"--norc", "--noprofile", "-c", bashComplete, "bash", script, mode, line, strconv.Itoa(cword)}, words...)
		cmd := exec.Command("bash", args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%q: bash: %v\n%s", line, err, stderr.String())
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				got = append(got, l)
			}
		}
		return got
	}
	// firstFields drops the descriptions bash shows beside several candidates.
	firstFields := func(reply []string) []string {
		out := make([]string, len(reply))
		for i, r := range reply {
			out[i] = strings.Fields(r)[0]
		}
		return out
	}

	// The -o values are what the command registers (a command may add formats), and
	// always include the three common ones.
	inspectFormats := func() []string {
		root := NewCmdRoot(NewFactory(&IOStreams{Out: io.Discard, ErrOut: io.Discard}, VersionInfo{}))
		inspect, _, err := root.Find([]string{"inspect"})
		if err != nil {
			t.Fatal(err)
		}
		fn, ok := inspect.GetFlagCompletionFunc("output")
		if !ok {
			t.Fatal("inspect -o has no completion")
		}
		formats, _ := fn(inspect, nil, "")
		for _, f := range []string{"table", "json", "yaml"} {
			if !slices.Contains(formats, f) {
				t.Fatalf("inspect -o does not offer %s: %q", f, formats)
			}
		}
		return slices.Sorted(slices.Values(formats))
	}()

	url := srv.URL()
	cases := []struct {
		line string
		want []string // the completions bash inserts or lists (without descriptions)
	}{
		{"bucketctl ins", []string{"inspect"}},
		{"bucketctl c", []string{"check", "completion", "config", "consume"}},
		{"bucketctl g", nil}, // gen is hidden
		{"bucketctl inspect --out", []string{"--output"}},
		{"bucketctl inspect -o ", inspectFormats},
		{"bucketctl list --output y", []string{"yaml"}},
		{"bucketctl --context ", []string{"local", "prod", "staging"}},
		{"bucketctl inspect --context p", []string{"prod"}},
		{"bucketctl completion ", []string{"bash", "fish", "powershell", "zsh"}},
		// bash replaces only the text after the last ":" of the word, so the script
		// leaves "rate:" out of the replies.
		{"bucketctl --url " + url + " inspect rate:u", []string{"user:1", "user:2"}},
		{"bucketctl inspect --url " + url + " rate:", []string{"ip:1", "user:1", "user:2"}},
		{"bucketctl --url " + url + " reset oth", []string{"other:user:3"}},
	}
	modes := []string{"stand-in"}
	if _, err := os.Stat(bashCompletionLib); err == nil {
		modes = append(modes, "bash-completion")
	} else {
		t.Logf("%s is not installed (apt-get install bash-completion): testing with the stand-in only", bashCompletionLib)
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			for _, tc := range cases {
				got := complete(t, mode, tc.line)
				fields := firstFields(got)
				slices.Sort(fields)
				if !slices.Equal(fields, tc.want) {
					t.Errorf("%q<TAB> offers %q, want %q", tc.line, got, tc.want)
				}
			}
			// Several verbs come with their descriptions; a single one is inserted bare.
			if got := complete(t, mode, "bucketctl c"); len(got) < 2 || !strings.Contains(got[0], "(") {
				t.Errorf("verbs without descriptions: %q", got)
			}
		})
	}
}
