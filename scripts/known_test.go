package scripts

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestBySHA: the registry names each script by the SHA1 EVALSHA sends for it, with its
// source.
func TestBySHA(t *testing.T) {
	want := map[string]string{"token_bucket": TokenBucket(), "reset": Reset(), "multi_bucket": MultiBucket(), "read": Read}
	got := BySHA()
	if len(got) != len(want) {
		t.Fatalf("%d scripts, want %d", len(got), len(want))
	}
	for name, src := range want {
		n, ok := got[redis.NewScript(src).Hash()]
		if !ok || n.Name != name || n.Src != src {
			t.Errorf("%s: not found by the SHA1 go-redis sends (got %q)", name, n.Name)
		}
	}
}
