package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestAdviceNamedOnce: the library's errors state what is wrong without naming a flag (an
// application calling it has none); the command line adds its advice in one place.
func TestAdviceNamedOnce(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	if err := c.Set(ctx, "lease", "1700000000", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, noSpec := st.Take(ctx, "missing", bucket.Spec{}, 1)
	// The lease read as a redis-rate TAT that no rule declares: refused before anything is
	// sent (a guess), and by the script (detected, not declared).
	l, err := bucket.LookupLayout("redis-rate")
	if err != nil {
		t.Fatal(err)
	}
	lease := bucket.State{Key: "lease", Type: "string", Exists: true, Layout: l, Detected: true}
	_, undeclared := st.ResetState(ctx, lease, bucket.ResetTo{Delete: true})
	lease.Guess = "declare it"
	_, guessed := st.ResetState(ctx, lease, bucket.ResetTo{Delete: true})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{noSpec, "pass --capacity and --rate, or add a rule"},
		{undeclared, "declare --layout redis-rate or a rule"},
		{guessed, "declare --layout redis-rate or a rule"},
	} {
		if tc.err == nil || strings.Contains(tc.err.Error(), "--") {
			t.Errorf("library error %v: want an error that names no flag", tc.err)
			continue
		}
		if msg := errorMessage(tc.err); strings.Count(msg, tc.want) != 1 {
			t.Errorf("errorMessage(%v) = %q, want the advice %q once", tc.err, msg, tc.want)
		}
	}
	if v := c.Get(ctx, "lease").Val(); v != "1700000000" {
		t.Fatalf("the lease changed: %q", v)
	}
}
