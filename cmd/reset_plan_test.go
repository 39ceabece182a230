package cmd

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// TestResetStep plans a refill, a write of tokens, a change of spec and a missing key on a real
// server's buckets.
func TestResetStep(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	st := bucket.NewStore(srv.Client(t))
	spec := bucket.Spec{Capacity: 10, Rate: 0.001}
	if _, err := st.Take(ctx, "p:a", spec, 4); err != nil {
		t.Fatal(err)
	}
	states, err := st.Inspect(ctx, []string{"p:a", "p:none"}, func(string) bucket.Target { return bucket.Target{} })
	if err != nil {
		t.Fatal(err)
	}
	a, none := states[0], states[1]

	// A native bucket is refilled by writing it full (its spec and counters kept), so it
	// still reads after the reset; other layouts are refilled by deleting.
	refill, err := (&resetter{opts: &ResetOptions{}}).step(a)
	if err != nil || !refill.needed || refill.op.To.Delete || refill.op.To.Tokens != 10 || refill.op.Spec != spec || refill.before == nil || *refill.before < 6 || *refill.before > 6.01 ||
		refill.after == nil || *refill.after != 10 || refill.op.Respec {
		t.Errorf("refill: %v %+v", err, refill)
	}
	c := srv.Client(t)
	if err := c.HSet(ctx, "p:ex", "tokens", "3", "last_refill", "1700000000.5").Err(); err != nil {
		t.Fatal(err)
	}
	ex, err := st.Inspect(ctx, []string{"p:ex"}, func(string) bucket.Target {
		l := bucket.Presets["express"]
		return bucket.Target{Layout: &l, Spec: spec, Source: "flags"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if del, err := (&resetter{opts: &ResetOptions{}}).step(ex[0]); err != nil || !del.needed || !del.op.To.Delete {
		t.Errorf("refill of an express bucket deletes it: %v %+v", err, del)
	}
	set, err := (&resetter{opts: &ResetOptions{Tokens: 3, TokensSet: true}}).step(a)
	if err != nil || !set.needed || set.op.To.Delete || set.op.To.Tokens != 3 || set.after == nil || *set.after != 3 {
		t.Errorf("--tokens 3: %v %+v", err, set)
	}
	respec, err := (&resetter{opts: &ResetOptions{}, flagSpec: bucket.Spec{Capacity: 20, Rate: 1}}).step(a)
	if err != nil || !respec.op.Respec || respec.storedSpec != spec || respec.op.To.Delete || respec.op.To.Tokens != 20 {
		t.Errorf("new spec: %v %+v", err, respec)
	}
	skip, err := (&resetter{opts: &ResetOptions{}}).step(none)
	if err != nil || skip.needed || skip.after != nil {
		t.Errorf("refill of a missing key needs nothing: %v %+v", err, skip)
	}
	if _, err := (&resetter{opts: &ResetOptions{Tokens: 1, TokensSet: true}}).step(none); !errors.Is(err, bucket.ErrNoSpec) {
		t.Errorf("--tokens on a missing key without a spec: %v, want ErrNoSpec", err)
	}
}

// TestResetBatches: 1,201 resets go in three batches of at most 500, every one tallied.
func TestResetBatches(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := context.Background()
	st := bucket.NewStore(srv.Client(t))
	spec := bucket.Spec{Capacity: 10, Rate: 1}
	var ops []bucket.ResetOp
	keys := make([]string, 1201)
	for i := range keys {
		keys[i] = fmt.Sprintf("b:%d", i)
		ops = append(ops, bucket.ResetOp{Key: keys[i], Layout: bucket.NativeLayout, Spec: spec, To: bucket.ResetTo{Delete: true}})
	}
	if err := st.TakeMany(ctx, keys[:1000], spec, 1, make([]bucket.Result, 1000)); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var counted output.ResetTally
	err := resetBatches(ctx, st, ops, func(batch []bucket.ResetOp, out []bucket.ResetOutcome, err error) error {
		sizes = append(sizes, len(batch))
		for i, o := range out {
			counted.Add(batch[i], o)
		}
		return err
	})
	if err != nil || fmt.Sprint(sizes) != "[500 500 201]" || counted.N[bucket.ResetDone] != 1000 || counted.N[bucket.ResetMissing] != 201 || counted.Reset() != 1000 ||
		counted.ByLayout["native"] != 1000 {
		t.Fatalf("resetBatches: %v, batches %v, tally %+v", err, sizes, counted)
	}
	if n, err := srv.Client(t).DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("after the resets %d keys are left (%v)", n, err)
	}
}
