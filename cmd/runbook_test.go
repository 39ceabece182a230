package cmd

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestRunbookScript runs scripts/runbook-test.sh with the built binary against a fresh
// redis-server: consume, reset --match --yes, inspect each key (exit 0, full), consume
// without a spec, list --sort-by fill, inspect -o json with retry_at and full_at parsed as
// RFC 3339. The script is the runbook; this test is what makes 'make test' run it.
func TestRunbookScript(t *testing.T) {
	bin := buildBinary(t) // before isolate: go build needs the real HOME (module cache)
	isolate(t)
	srv := redistest.Start(t)
	c := exec.Command("sh", "../scripts/runbook-test.sh")
	c.Env = append(os.Environ(), "BUCKETCTL="+bin, "BUCKETCTL_URL="+srv.URL())
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "runbook-test: ok") {
		t.Fatalf("scripts/runbook-test.sh: %v\n%s", err, out)
	}
	if n := srv.Client(t).Exists(t.Context(), "runbook:user:1", "runbook:user:2", "runbook:user:3").Val(); n != 3 {
		t.Fatalf("after the runbook %d of its 3 buckets exist, want 3 (a reset keeps native buckets)", n)
	}
}
