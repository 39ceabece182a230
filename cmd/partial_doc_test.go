package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestScanFailureLeavesDocumentOpen: a -o json or yaml document of a scan that fails (exit
// 3) does not parse, whether records were written before the failure or none: a consumer
// cannot take a partial result for the whole one. The same run without the fault parses.
func TestScanFailureLeavesDocumentOpen(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	expressHashes(t, srv, "p:", 3000)
	spec := []string{"--match", "p:*", "--layout", "express", "--capacity", "10", "--rate", "1", "--limit", "0"}
	parse := map[string]func(string) error{
		"json": func(s string) error { var v []any; return json.Unmarshal([]byte(s), &v) },
		"yaml": func(s string) error { var v []any; return yaml.Unmarshal([]byte(s), &v) },
	}
	for _, verb := range [][]string{{"list"}, {"inspect"}, {"reset", "--tokens", "1", "--dry-run"}} {
		for format, parses := range parse {
			args := append(append(append([]string{}, verb...), spec...), "-o", format)
			if r := run(t, srv.URL(), args...); r.code != ExitOK || parses(r.out) != nil {
				t.Fatalf("%v: exit %d, parse error %v: the run without a fault must parse", args, r.code, parses(r.out))
			}
			for _, skip := range []int{0, 2} {
				p := redistest.StartProxy(t, srv.Addr())
				p.Arm(redistest.Rule{Match: "scan", Skip: skip, Fault: redistest.Drop})
				r := run(t, p.URL(), args...)
				if r.code != ExitUnreachable {
					t.Errorf("%v, SCAN %d dropped: exit %d %q, want 3", args, skip+1, r.code, r.errOut)
				}
				if err := parses(r.out); err == nil {
					t.Errorf("%v, SCAN %d dropped: stdout parses as a whole result (%d bytes)", args, skip+1, len(r.out))
				}
				if skip > 0 && !strings.Contains(r.out, "p:") {
					t.Errorf("%v, SCAN %d dropped: the records read before the failure are not on stdout: %q", args, skip+1, r.out)
				}
			}
		}
	}
	// A refused plan (exit 2) is no complete result either.
	args := append(append([]string{"reset"}, spec...), "--tokens", "50", "--dry-run", "-o", "json")
	if r := run(t, srv.URL(), args...); r.code != ExitUsage || parse["json"](r.out) == nil {
		t.Errorf("%v: exit %d, stdout %.40q: want 2 and a document that does not parse", args, r.code, r.out)
	}
}
