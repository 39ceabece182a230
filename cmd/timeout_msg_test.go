package cmd

import (
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestTimeoutSaysAddressAndFix: a server that holds its reply past --timeout gets the same
// words from every command: the address, that Redis did not answer within --timeout, and
// the fix. The connection was made, so nothing blames the dial (--dial-timeout).
func TestTimeoutSaysAddressAndFix(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	run(t, srv.URL(), "consume", "to:k", "--capacity", "10", "--rate", "1")
	for _, c := range []struct {
		match string // the request whose reply is held
		args  []string
	}{
		{"evalsha", []string{"inspect", "to:k"}},
		{"ping", []string{"check", "to:k", "--capacity", "10", "--rate", "1"}},
		{"evalsha", []string{"check", "to:k", "--capacity", "10", "--rate", "1"}},
		{"evalsha", []string{"consume", "to:k", "--capacity", "10", "--rate", "1"}},
		{"evalsha", []string{"reset", "to:k", "--yes"}},
		{"scan", []string{"list"}},
		{"scan", []string{"inspect", "--match", "*"}},
		{"scan", []string{"audit"}},
		{"scan", []string{"reset", "--match", "*", "--dry-run"}},
		{"script", []string{"script", "load"}},
	} {
		p := redistest.StartProxy(t, srv.Addr())
		p.Arm(redistest.Rule{Match: c.match, Fault: redistest.Hold})
		r := run(t, p.URL(), append([]string{"--timeout", "500ms"}, c.args...)...)
		want := "Redis at " + p.Addr() + " did not answer within --timeout"
		if r.code != ExitUnreachable || !strings.Contains(r.errOut, want) || !strings.Contains(r.errOut, "raise --timeout") ||
			strings.Contains(r.errOut, "dial-timeout") || strings.Contains(r.errOut, "cannot reach") || strings.Count(r.errOut, p.Addr()) != 1 {
			t.Errorf("%v, %s held: exit %d %q: want 3, %q once, the fix (raise --timeout) and no dial blamed", c.args, c.match, r.code, r.errOut, want)
		}
		oneLine(t, r)
	}
}
