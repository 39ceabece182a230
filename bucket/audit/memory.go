package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// MemoryProbe is one bucket (or other key) whose size the audit measures: its keys (both of
// a two-key bucket) and, once measured, their MEMORY USAGE in bytes.
type MemoryProbe struct {
	Keys  []string
	Bytes int64

	family *Family
	kinds  []FindingKind
}

// Measure sends MEMORY USAGE for every key of the probes in one pipelined round trip and
// fills their Bytes (Store.MemoryUsage).
func Measure(ctx context.Context, st *bucket.Store, probes []MemoryProbe) error {
	var keys []string
	for _, p := range probes {
		keys = append(keys, p.Keys...)
	}
	sizes, err := st.MemoryUsage(ctx, keys)
	if err != nil {
		return err
	}
	for i := range probes {
		probes[i].Bytes = 0
		for range probes[i].Keys {
			probes[i].Bytes += sizes[0]
			sizes = sizes[1:]
		}
	}
	return nil
}

// AddMemory adds measured probes (from Add, after Measure) to the estimates.
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

// AddPage tallies one page of states and measures its sampled keys. A server whose ACL
// refuses MEMORY USAGE leaves memory out of the report (Report.NoMemory) instead of
// failing the audit.
func (a *Auditor) AddPage(ctx context.Context, st *bucket.Store, states []bucket.State) error {
	probes := a.Add(states)
	if a.noMemory != "" {
		return nil
	}
	if err := Measure(ctx, st, probes); err != nil {
		if !redis.IsPermissionError(errors.Unwrap(err)) && !redis.IsPermissionError(err) {
			return err
		}
		a.noMemory = "the ACL refuses MEMORY USAGE: memory is not estimated"
		return nil
	}
	a.AddMemory(probes)
	return nil
}

func slotShare(prefix string, slot int, n, total int64) string {
	return fmt.Sprintf("%s: %d of %d buckets in slot %d;", prefix, n, total, slot)
}
