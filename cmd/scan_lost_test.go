package cmd

import (
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestScanLostConnectionIsNoEnd: a connection dropped in the middle of a scan (go-redis
// reports io.EOF) fails the command; it is not taken for the end of the keyspace.
func TestScanLostConnectionIsNoEnd(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	expressHashes(t, srv, "e:", 3000)
	for _, args := range [][]string{
		{"list", "--match", "e:*", "--layout", "express", "--capacity", "10", "--rate", "1", "--limit", "0", "-o", "jsonl"},
		{"reset", "--match", "e:*", "--layout", "express", "--capacity", "10", "--rate", "1", "--tokens", "1", "--yes", "-o", "jsonl"},
		{"audit", "--match", "e:*", "-o", "json"},
	} {
		p := redistest.StartProxy(t, srv.Addr())
		p.Arm(redistest.Rule{Match: "scan", Skip: 2, Fault: redistest.Drop})
		r := run(t, p.URL(), args...)
		t.Logf("%s: exit %d: %q", args[0], r.code, r.errOut)
		if r.code == ExitOK || r.code == ExitFindings {
			t.Errorf("%s: exit %d after a dropped connection, as if the scan had ended: %d lines out, stderr %q",
				args[0], r.code, strings.Count(r.out, "\n"), r.errOut)
		}
		if !strings.Contains(r.errOut, "the connection to "+p.Addr()+" was lost before the reply") || strings.Contains(r.errOut, "scan "+p.Addr()) {
			t.Errorf("%s: stderr does not name the lost connection to the server, once: %q", args[0], r.errOut)
		}
	}
}
