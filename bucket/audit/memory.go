package audit

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// MemoryProbe is the keys of one bucket (or other key) and, once measured, their bytes.
type MemoryProbe struct {
	Keys  []string
	Bytes int64

	family *Family
	kinds  []FindingKind
}

// AddMemory adds measured probes (from Add) to the estimates.
func (a *Auditor) AddMemory(probes []MemoryProbe) {
	for _, p := range probes {
		if p.family != nil {
			p.family.memSum += p.Bytes
		}
		for _, k := range p.kinds {
			a.findings[k].memSum += p.Bytes
		}
	}
}

// AddPage tallies one page of states and measures its sampled keys in one round trip; an ACL
// that refuses MEMORY USAGE leaves memory out (Report.NoMemory).
func (a *Auditor) AddPage(ctx context.Context, st *bucket.Store, states []bucket.State) error {
	probes := a.Add(states)
	if a.noMemory != "" {
		return nil
	}
	var keys []string
	for _, p := range probes {
		keys = append(keys, p.Keys...)
	}
	sizes, err := st.MemoryUsage(ctx, keys)
	if err != nil {
		if !redis.IsPermissionError(errors.Unwrap(err)) && !redis.IsPermissionError(err) {
			return err
		}
		a.noMemory = "the ACL refuses MEMORY USAGE: memory is not estimated"
		return nil
	}
	for i := range probes {
		for range probes[i].Keys {
			probes[i].Bytes, sizes = probes[i].Bytes+sizes[0], sizes[1:]
		}
	}
	a.AddMemory(probes)
	return nil
}
