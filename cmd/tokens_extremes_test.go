package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestResetTinyTokensReadable: reset --tokens 1e-63 (and 5e-324, the least float) writes a
// level that inspect, list and the next reset read (it wrote 65 bytes of plain decimal, and
// the bucket could no longer be read, consumed or reset), for a key and for --match.
func TestResetTinyTokensReadable(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	spec := []string{"--layout", "express", "--capacity", "10", "--rate", "0.001"}
	for _, v := range []string{"1e-63", "5e-324", "1e-300"} {
		for i := range 3 {
			c.HSet(context.Background(), fmt.Sprintf("tiny:%d", i), "tokens", "5", "last_refill", "1795428012.5")
		}
		steps := [][]string{
			append([]string{"reset", "tiny:0", "--tokens", v, "--yes"}, spec...),
			append([]string{"reset", "--match", "tiny:*", "--tokens", v, "--yes"}, spec...),
			append([]string{"inspect", "tiny:0", "tiny:1", "-o", "json"}, spec...),
			append([]string{"list", "--match", "tiny:*"}, spec...),
			append([]string{"reset", "--match", "tiny:*", "--yes"}, spec...),
		}
		for _, args := range steps {
			r := run(t, srv.URL(), args...)
			if r.code != ExitOK || strings.Contains(r.out+r.errOut, "not a bucket") {
				t.Fatalf("--tokens %s, then %v: exit %d %q %q", v, args, r.code, r.out, r.errOut)
			}
		}
		if n := c.Exists(context.Background(), "tiny:0", "tiny:1", "tiny:2").Val(); n != 0 {
			t.Fatalf("--tokens %s: %d buckets left after the refill", v, n)
		}
	}
}
