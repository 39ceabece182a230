package bucket_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestResetManyRefusedWrites: a server that refuses writes (min-replicas-to-write without a
// replica) fails each op with a *KeyError naming its key; Refusal names the reason and
// ReplyText drops the script's SHA1 and line that Redis appends.
func TestResetManyRefusedWrites(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	keys := []string{"rf:1", "rf:2"}
	var ops []bucket.ResetOp
	for _, k := range keys {
		if _, err := st.Take(ctx, k, spec, 1); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, bucket.ResetOp{Key: k, Layout: bucket.NativeLayout, Spec: spec, To: bucket.ResetTo{Delete: true}})
	}
	if err := c.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	out, err := st.ResetMany(ctx, ops)
	if len(out) != 2 || out[0] != bucket.ResetFailed || out[1] != bucket.ResetFailed {
		t.Fatalf("outcomes %v, want both failed (%v)", out, err)
	}
	if got := rediserr.Refusal(err); got != "NOREPLICAS" {
		t.Errorf("Refusal(%v) = %q, want NOREPLICAS", err, got)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 2 {
		t.Fatalf("want two joined errors, got %v", err)
	}
	for i, e := range joined.Unwrap() {
		var ke *bucket.KeyError
		if !errors.As(e, &ke) || ke.Key != keys[i] {
			t.Errorf("error %d: %v, want a *KeyError for %q", i, e, keys[i])
		}
		if got := rediserr.ReplyText(e); got != "NOREPLICAS Not enough good replicas to write" {
			t.Errorf("ReplyText %q (from %q)", got, e)
		}
	}
	if _, err := st.Take(ctx, "rf:1", spec, 1); rediserr.Refusal(err) != "NOREPLICAS" || strings.Contains(rediserr.ReplyText(err), "script:") {
		t.Errorf("Take: %v, want a NOREPLICAS reply", err)
	}
	if got := rediserr.Refusal(errors.New("ERR unknown command")); got != "" {
		t.Errorf("Refusal of another error: %q", got)
	}
}
