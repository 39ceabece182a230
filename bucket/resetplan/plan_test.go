package resetplan_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/resetplan"
)

// TestFor plans a refill, a write of tokens, a change of spec and a missing key on a real
// server's buckets.
func TestFor(t *testing.T) {
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
	refill, err := resetplan.For(a, resetplan.Settings{})
	if err != nil || !refill.Needed || refill.Op.To.Delete || refill.Op.To.Tokens != 10 || refill.Op.Spec != spec || refill.Before == nil || *refill.Before < 6 || *refill.Before > 6.01 ||
		refill.After == nil || *refill.After != 10 || refill.Respec {
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
	if del, err := resetplan.For(ex[0], resetplan.Settings{}); err != nil || !del.Needed || !del.Op.To.Delete {
		t.Errorf("refill of an express bucket deletes it: %v %+v", err, del)
	}
	set, err := resetplan.For(a, resetplan.Settings{SetTokens: true, Tokens: 3})
	if err != nil || !set.Needed || set.Op.To.Delete || set.Op.To.Tokens != 3 || set.After == nil || *set.After != 3 {
		t.Errorf("--tokens 3: %v %+v", err, set)
	}
	respec, err := resetplan.For(a, resetplan.Settings{Spec: bucket.Spec{Capacity: 20, Rate: 1}})
	if err != nil || !respec.Respec || !respec.Op.Respec || respec.StoredSpec != spec || respec.Op.To.Delete || respec.Op.To.Tokens != 20 {
		t.Errorf("new spec: %v %+v", err, respec)
	}
	skip, err := resetplan.For(none, resetplan.Settings{})
	if err != nil || skip.Needed || skip.After != nil {
		t.Errorf("refill of a missing key needs nothing: %v %+v", err, skip)
	}
	if _, err := resetplan.For(none, resetplan.Settings{SetTokens: true, Tokens: 1}); !errors.Is(err, bucket.ErrNoSpec) {
		t.Errorf("--tokens on a missing key without a spec: %v, want ErrNoSpec", err)
	}
}

// TestRunBatches: 1,201 resets go in three batches of at most 500, every one tallied.
func TestRunBatches(t *testing.T) {
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
	var tally resetplan.Tally
	err := resetplan.Run(ctx, st, ops, func(batch []bucket.ResetOp, out []bucket.ResetOutcome, err error) error {
		sizes = append(sizes, len(batch))
		for i, o := range out {
			tally.Add(batch[i], o)
		}
		return err
	})
	if err != nil || fmt.Sprint(sizes) != "[500 500 201]" || tally.Done != 1000 || tally.Missing != 201 || tally.Reset() != 1000 ||
		tally.ByLayout["native"] != 1000 {
		t.Fatalf("Run: %v, batches %v, tally %+v", err, sizes, tally)
	}
	if n, err := srv.Client(t).DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("after the resets %d keys are left (%v)", n, err)
	}
}
