package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestResetKeysAllOrNothing: keys named on the command line are reset all together or not
// at all. When one is not a bucket, nothing is written (not even the buckets named beside
// it), each such key gets its line and a last line says why nothing was reset: exit 1, with
// --dry-run and -o json alike. A missing key is no problem: it is already full.
func TestResetKeysAllOrNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	ctx := context.Background()
	if r := run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("consume: %+v", r)
	}
	if err := c.Set(ctx, "rate:user:str", "hello", 0).Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "rate:user:str2", "world", 0)
	bucketBefore := dumpKey(t, c, "rate:user:1")
	for _, args := range [][]string{
		{"reset", "rate:user:1", "rate:user:str", "--yes"},
		{"reset", "rate:user:str", "rate:user:1", "--yes", "-o", "json"},
		{"reset", "rate:user:1", "rate:user:str", "--dry-run"},
		{"reset", "rate:user:1", "rate:user:str", "--tokens", "3", "--yes"},
		{"reset", "rate:user:1", "rate:user:nokey", "rate:user:str", "--yes"},
	} {
		r := run(t, url, args...)
		if r.code != ExitError {
			t.Errorf("%v: exit %d, want 1: %+v", args, r.code, r)
		}
		if got := dumpKey(t, c, "rate:user:1"); got != bucketBefore {
			t.Fatalf("%v: rate:user:1 was written beside a key that is not a bucket", args)
		}
		lines := strings.Split(strings.TrimRight(r.errOut, "\n"), "\n")
		of := "2"
		if len(args) > 4 && args[2] == "rate:user:nokey" {
			of = "3"
		}
		want := []string{`bucketctl: "rate:user:str": `, "bucketctl: nothing reset: 1 of " + of + " keys is not a bucket; leave it out and run again"}
		if len(lines) != 2 || !strings.HasPrefix(lines[0], want[0]) || lines[1] != want[1] {
			t.Errorf("%v: stderr %q, want the key's line, then %q", args, r.errOut, want[1])
		}
		if r.out != "" {
			t.Errorf("%v: a refused reset printed a plan: %q", args, r.out)
		}
	}
	r := run(t, url, "reset", "rate:user:1", "rate:user:str", "rate:user:str2", "--yes")
	if r.code != ExitError || !strings.Contains(r.errOut, "nothing reset: 2 of 3 keys are not buckets; leave them out and run again") {
		t.Errorf("two keys that are not buckets: exit %d %q", r.code, r.errOut)
	}
	// Several keys, none a bucket: a line each, then the summary.
	r = run(t, url, "reset", "rate:user:str", "rate:user:str", "--yes")
	if lines := strings.Split(strings.TrimSpace(r.errOut), "\n"); r.code != ExitError || len(lines) != 3 ||
		lines[2] != "bucketctl: nothing reset: none of the 2 keys is a bucket" {
		t.Errorf("two keys, neither a bucket: exit %d %q", r.code, r.errOut)
	}
	// Only keys that are not buckets: one line each, as before.
	r = run(t, url, "reset", "rate:user:str", "--yes")
	if r.code != ExitError {
		t.Errorf("reset of a string: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
	if dumpKey(t, c, "rate:user:1") != bucketBefore {
		t.Fatal("rate:user:1 changed")
	}
	// A missing key beside a bucket: the bucket is reset, the missing key is named, exit 6
	// (a misspelt key must not pass unnoticed); with --ignore-missing it is no error.
	r = run(t, url, "reset", "rate:user:1", "rate:user:nokey", "--yes")
	assertFull(t, c, "rate:user:1")
	if r.code != ExitNoKey ||
		!strings.HasSuffix(r.errOut, "bucketctl: no such key: \"rate:user:nokey\" (misspelt, or a bucket that expired full or was refilled by a reset that deletes: a bucket's key expires once it has refilled, and a missing bucket reads as full)\n") {
		t.Fatalf("reset of a bucket and a missing key: exit %d %q", r.code, r.errOut)
	}
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	r = run(t, url, "reset", "rate:user:1", "rate:user:nokey", "--yes", "--ignore-missing")
	assertFull(t, c, "rate:user:1")
	if r.code != ExitOK {
		t.Fatalf("reset --ignore-missing of a bucket and a missing key: exit %d %q", r.code, r.errOut)
	}
	for _, args := range [][]string{{"--yes"}, {"--dry-run"}} {
		r = run(t, url, append([]string{"reset", "rate:user:nokey"}, args...)...)
		if r.code != ExitNoKey || !strings.Contains(r.errOut, `no such key: "rate:user:nokey"`) {
			t.Errorf("reset %v of a missing key: exit %d %q", args, r.code, r.errOut)
		}
	}
	if r = run(t, url, "reset", "rate:user:nokey", "--yes", "--ignore-missing"); r.code != ExitOK {
		t.Errorf("reset --ignore-missing of a missing key: exit %d %q", r.code, r.errOut)
	}
	// --match still skips keys that are not buckets and resets the rest.
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	r = run(t, url, "reset", "--match", "rate:user:*", "--yes")
	assertFull(t, c, "rate:user:1")
	if r.code != ExitOK || c.Exists(ctx, "rate:user:str").Val() != 1 {
		t.Fatalf("reset --match: exit %d %q", r.code, r.errOut)
	}
}

// TestResetMatchLeftOutNote: the note on keys that are not buckets suggests a command that
// exists (reset has no --all), and that command lists them.
func TestResetMatchLeftOutNote(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	ctx := context.Background()
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	c.Set(ctx, "rate:user:str", "hello", 0)
	c.Set(ctx, "rate:user:it's", "hello", 0)
	want := `note: 2 keys matching "rate:user:*" are not buckets and were left out (bucketctl list --match 'rate:user:*' --all lists them)`
	// The dry run says it too: the preview leaves out what the reset would.
	r := run(t, url, "reset", "--match", "rate:user:*", "--dry-run")
	if r.code != ExitOK || !strings.Contains(r.errOut, want+"\n") {
		t.Fatalf("reset --match --dry-run: exit %d %q, want %q", r.code, r.errOut, want)
	}
	r = run(t, url, "reset", "--match", "rate:user:*", "--yes")
	if r.code != ExitOK {
		t.Fatalf("reset --match: exit %d %q", r.code, r.errOut)
	}
	if !strings.Contains(r.errOut, want+"\n") {
		t.Fatalf("stderr %q, want %q", r.errOut, want)
	}
	r = run(t, url, "list", "--match", "rate:user:*", "--all")
	if r.code != ExitOK || !strings.Contains(r.out, "rate:user:str") || !strings.Contains(r.out, "rate:user:it's") {
		t.Fatalf("the suggested list: exit %d %q %q", r.code, r.out, r.errOut)
	}
	// list and inspect have --all themselves.
	r = run(t, url, "list", "--match", "rate:user:*")
	if !strings.Contains(r.errOut, "were left out (--all lists them)") {
		t.Fatalf("list's note: %q", r.errOut)
	}
	// A pattern holding a quote is quoted for the shell.
	r = run(t, url, "reset", "--match", "rate:user:it'*", "--yes")
	if want := `(bucketctl list --match 'rate:user:it'\''*' --all lists them)`; !strings.Contains(r.errOut, want) {
		t.Fatalf("stderr %q, want %q", r.errOut, want)
	}
}

// TestResetRefusedAtWriteFails: an undeclared webman bucket is refused before the prompt
// (exit 2, the advice to declare it); a declared one that the application replaces while the
// prompt waits is refused by the script, exit 1, never 0.
func TestResetRefusedAtWriteFails(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func()
		want   int
		note   string
	}{
		{"undeclared", func() { t.Error("asked to confirm a reset of an undeclared bucket") }, ExitUsage, "declare --layout webman or a rule"},
		{"changed", func() { c.Del(ctx, "wb", "wb:last_time"); c.HSet(ctx, "wb", "name", "alice") }, ExitError, "no longer buckets"},
	} {
		args := []string{"--url", srv.URL(), "reset", "wb"}
		if tc.name == "changed" {
			args = append(args, "--layout", "webman")
		}
		c.Del(ctx, "wb", "wb:last_time")
		c.Set(ctx, "wb", "5", 0)
		c.Set(ctx, "wb:last_time", "1700000000.5", 0)
		io, _, _, errOut := testStreams()
		io.Prompt = func(string) (string, error) { tc.change(); return "y", nil }
		before := dumpKey(t, c, "wb")
		code := Run(ctx, newTestFactory(t, io, VersionInfo{Version: "test"}), args)
		if code != tc.want || !strings.Contains(errOut.String(), tc.note) {
			t.Errorf("%s: exit %d, want %d and a note %q:\n%s", tc.name, code, tc.want, tc.note, errOut)
		}
		if dumpKey(t, c, "wb") != before && tc.name == "undeclared" {
			t.Errorf("%s: the undeclared bucket changed", tc.name)
		}
	}
}
