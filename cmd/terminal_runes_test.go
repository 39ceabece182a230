package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestDataFormatsEscapeTerminalRunes: a key name holding a rune a terminal obeys (U+009B, the
// one-byte CSI; U+202E, a bidi override; U+2066) reaches no output raw: JSON, JSON lines
// and YAML write it escaped, and a reader of them still gets the key's exact name.
func TestDataFormatsEscapeTerminalRunes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	native, other := "esc:bidi\u202egnp.exe", "esc:c1\u009b31m\u2066"
	if err := c.HSet(ctx, native, "tokens", "1", "ts", "1", "capacity", "10", "rate", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, other, "5", 0).Err(); err != nil {
		t.Fatal(err)
	}
	raw := func(what, out string) {
		t.Helper()
		if i := strings.IndexAny(out, "\u009b\u202e\u2066"); i >= 0 {
			t.Fatalf("%s: a rune a terminal obeys reached the output raw at byte %d: %q", what, i, out)
		}
	}
	for _, f := range []string{"json", "yaml", "jsonl"} {
		r := run(t, srv.URL(), "list", "--match", "esc:*", "--all", "-o", f)
		if r.code != ExitOK {
			t.Fatalf("list -o %s: exit %d %q", f, r.code, r.errOut)
		}
		raw("list -o "+f, r.out)
		// Each format read back as its readers read it (JSON lines: a document a line).
		var rows []struct{ Key string }
		var err error
		switch f {
		case "json":
			err = json.Unmarshal([]byte(r.out), &rows)
		case "yaml":
			err = yaml.Unmarshal([]byte(r.out), &rows)
		case "jsonl":
			err = json.Unmarshal([]byte("["+strings.Join(strings.Split(strings.TrimSpace(r.out), "\n"), ",")+"]"), &rows)
		}
		if err != nil {
			t.Fatalf("list -o %s: %v\n%s", f, err, r.out)
		}
		var keys []string
		for _, row := range rows {
			keys = append(keys, row.Key)
		}
		if strings.Join(keys, "|") != strings.Join([]string{native, other}, "|") &&
			strings.Join(keys, "|") != strings.Join([]string{other, native}, "|") {
			t.Fatalf("list -o %s: keys %q, want exactly %q and %q", f, keys, native, other)
		}
	}
	for _, f := range []string{"json", "yaml"} {
		r := run(t, srv.URL(), "inspect", native, "-o", f)
		if r.code != ExitOK {
			t.Fatalf("inspect -o %s: exit %d %q", f, r.code, r.errOut)
		}
		raw("inspect -o "+f, r.out)
	}
	writeConfig(t, "current-context: \"x\\u202eprod\"\ncontexts:\n  \"x\\u202eprod\": {url: \""+srv.URL()+"\"}\n")
	for _, args := range [][]string{{"config", "view"}, {"config", "view", "-o", "json"}, {"config", "get-contexts", "-o", "yaml"}, {"config", "get-contexts"}} {
		r := run(t, "", args...)
		if r.code != ExitOK {
			t.Fatalf("%v: exit %d %q", args, r.code, r.errOut)
		}
		raw(strings.Join(args, " "), r.out+r.errOut)
	}
}
