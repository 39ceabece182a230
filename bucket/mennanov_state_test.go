package bucket_test

import (
	"context"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestMennanovZeroStateAsOtherGuesses: an undeclared mennanov bucket at its owner's zero state
// (both forms) reads as the other guessed layouts read theirs at time 0: its stored level
// without a spec, and the level its owner computes, full, with one.
func TestMennanovZeroStateAsOtherGuesses(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rdb.Set(ctx, "{z:a}state", `{"state":{"Last":0,"Available":0},"version":3}`, 0)
	rdb.Set(ctx, "{z:b}available", "0", 0)
	rdb.Set(ctx, "{z:b}last", "0", 0)
	rdb.HSet(ctx, "ex:z", "tokens", "0", "last_refill", "0")
	rdb.HSet(ctx, "up:z", "refilledAt", "0", "tokens", "0")
	keys := map[string]string{"{z:a}state": "mennanov", "{z:b}available": "mennanov-legacy", "ex:z": "express", "up:z": "upstash"}
	names := []string{"{z:a}state", "{z:b}available", "ex:z", "up:z"}
	st := bucket.NewStore(rdb)
	for _, spec := range []bucket.Spec{{}, {Capacity: 10, Rate: 1}} {
		states, err := st.Inspect(ctx, names, func(string) bucket.Target { return bucket.Target{Spec: spec} })
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if s.Layout.Name != keys[s.Key] || s.Guess == "" || s.Problem != "" || !s.LevelKnown() || s.Stored.Tokens != 0 ||
				s.Tokens != spec.Capacity || s.Age() != 0 {
				t.Errorf("%s with spec %+v: %s guess %q, level %v (stored %v, known %v), age %v; want as the others: %v",
					s.Key, spec, s.Layout.Name, s.Guess, s.Tokens, s.Stored.Tokens, s.LevelKnown(), s.Age(), spec.Capacity)
			}
		}
	}
}
