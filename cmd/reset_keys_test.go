package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

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
	r := run(t, url, "reset", "--match", "rate:user:*", "--yes")
	if r.code != ExitOK {
		t.Fatalf("reset --match: exit %d %q", r.code, r.errOut)
	}
	want := `note: 2 keys matching "rate:user:*" are not buckets and were left out (bucketctl list --match 'rate:user:*' --all lists them)`
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
