package bucket_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// multiModelState is the model's view of one bucket.
type multiModelState struct {
	level           bucket.Level
	exists          bool
	allowed, denied int64
}

// TestTakeAllMatchesModel drives the script and TakeAllModel with the same random sequences
// on the client clock and compares every result and every stored field exactly.
func TestTakeAllMatchesModel(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	clk := &fakeClock{}
	st := bucket.NewStore(rdb, bucket.WithClientClock(clk.now))
	ctx := context.Background()

	capacities := []float64{1, 2.5, 3, 10, 100}
	rates := []float64{0.25, 1, 3.3, 7, 1000}
	costs := []float64{0, 0.5, 1, 1, 1, 2, 3.7}
	const seqs, steps = 25, 60
	decisions, denials := 0, 0
	for seq := range seqs {
		rng := rand.New(rand.NewPCG(uint64(seq), 0x6d756c7469))
		nkeys := 2 + rng.IntN(3)
		keys := make([]string, nkeys)
		specs := make([]bucket.Spec, nkeys)
		model := make([]multiModelState, nkeys)
		for i := range keys {
			keys[i] = fmt.Sprintf("rl:{seq%d}:tier%d", seq, i)
			specs[i] = bucket.Spec{Capacity: capacities[rng.IntN(len(capacities))], Rate: rates[rng.IntN(len(rates))]}
		}
		now := int64(1_700_000_000_000_000) + rng.Int64N(1e12)
		for step := range steps {
			// Mostly forward, sometimes standing still, sometimes a late caller's older clock.
			switch p := rng.IntN(10); {
			case p < 6:
				now += rng.Int64N(1_500_000)
			case p < 8:
				now -= rng.Int64N(500_000)
			}
			clk.us.Store(now)
			if rng.IntN(15) == 0 { // a new spec for one bucket: a lowered capacity clamps
				k := rng.IntN(nkeys)
				specs[k] = bucket.Spec{Capacity: capacities[rng.IntN(len(capacities))], Rate: rates[rng.IntN(len(rates))]}
			}
			// A random subset of the keys, in random order.
			perm := rng.Perm(nkeys)[:1+rng.IntN(nkeys)]
			tiers := make([]bucket.Tier, len(perm))
			levels := make([]bucket.Level, len(perm))
			exists := make([]bool, len(perm))
			for i, k := range perm {
				cost := min(costs[rng.IntN(len(costs))], specs[k].Capacity)
				tiers[i] = bucket.Tier{Name: fmt.Sprintf("t%d", k), Key: keys[k], Spec: specs[k], Cost: cost}
				levels[i], exists[i] = model[k].level, model[k].exists
			}
			out, written, want := bucket.TakeAllModel(tiers, levels, exists, now)
			got, err := st.TakeAll(ctx, tiers)
			if err != nil {
				t.Fatalf("seq %d step %d: %v", seq, step, err)
			}
			where := fmt.Sprintf("seq %d step %d (now %d, tiers %+v)", seq, step, now, tiers)
			if got.Allowed != want.Allowed || got.Denied != want.Denied {
				t.Fatalf("%s: allowed=%v denied=%d, model allowed=%v denied=%d", where, got.Allowed, got.Denied, want.Allowed, want.Denied)
			}
			for i := range tiers {
				if got.Tiers[i] != want.Tiers[i] {
					t.Fatalf("%s: tier %d\n got  %+v\n want %+v", where, i, got.Tiers[i], want.Tiers[i])
				}
			}
			if !written {
				t.Fatalf("%s: model says nothing written for valid tiers", where)
			}
			decisions++
			if !want.Allowed {
				denials++
			}
			for i, k := range perm {
				m := &model[k]
				m.level, m.exists = out[i], true
				switch {
				case want.Allowed:
					m.allowed++
				case !want.Tiers[i].Allowed:
					m.denied++
				}
				h := multiHash(t, rdb, keys[k])
				if tok := parse(t, h["tokens"]); tok != m.level.Tokens {
					t.Fatalf("%s: %s tokens %s, model %v", where, keys[k], h["tokens"], m.level.Tokens)
				}
				if ts := multiInt(t, h["ts"]); ts != m.level.TS {
					t.Fatalf("%s: %s ts %d, model %d", where, keys[k], ts, m.level.TS)
				}
				if h["capacity"] != fmt.Sprint(specs[k].Capacity) || h["rate"] != fmt.Sprint(specs[k].Rate) {
					t.Fatalf("%s: %s describes itself as %s/%s, spec %+v", where, keys[k], h["capacity"], h["rate"], specs[k])
				}
				if a, d := multiCounter(t, h, "allowed"), multiCounter(t, h, "denied"); a != m.allowed || d != m.denied {
					t.Fatalf("%s: %s counters %d/%d, model %d/%d", where, keys[k], a, d, m.allowed, m.denied)
				}
			}
		}
	}
	// The sequences must exercise both outcomes to mean anything.
	if denials == 0 || denials == decisions {
		t.Fatalf("%d denials in %d decisions: the sequences do not exercise both outcomes", denials, decisions)
	}
	t.Logf("%d decisions, %d denied", decisions, denials)
}
