package bucket

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// MemoryProbe is one bucket (or other key) whose size the audit measures: its keys (both of
// a two-key bucket) and, once measured, their MEMORY USAGE in bytes.
type MemoryProbe struct {
	Keys  []string
	Bytes int64

	family *Family
	kinds  []FindingKind
}

// MeasureMemory sends MEMORY USAGE for every key of the probes in one pipelined round trip
// (the Cluster client routes each to its master) and fills their Bytes. A key gone since
// the scan counts 0 bytes.
func (s *Store) MeasureMemory(ctx context.Context, probes []MemoryProbe) error {
	if len(probes) == 0 {
		return nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([][]*redis.IntCmd, len(probes))
	n := int64(0)
	for i, p := range probes {
		for _, k := range p.Keys {
			cmds[i] = append(cmds[i], pipe.MemoryUsage(ctx, k))
			n++
		}
	}
	_, err := pipe.Exec(ctx)
	s.countRead(n, 1)
	if err != nil && !isPerCommand(err) {
		s.networkErr(err)
		return fmt.Errorf("memory usage: %w", err)
	}
	for i := range probes {
		probes[i].Bytes = 0
		for _, c := range cmds[i] {
			v, err := c.Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return fmt.Errorf("memory usage %s: %w", strconv.Quote(probes[i].Keys[0]), err)
			}
			probes[i].Bytes += v
		}
	}
	return nil
}

// AddMemory adds measured probes (from Add, after MeasureMemory) to the estimates.
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

// AuditPage tallies one page of states and measures its sampled keys. A server whose ACL
// refuses MEMORY USAGE leaves memory out of the report (AuditReport.NoMemory) instead of
// failing the audit.
func (s *Store) AuditPage(ctx context.Context, a *Auditor, states []State) error {
	probes := a.Add(states)
	if a.noMemory != "" {
		return nil
	}
	if err := s.MeasureMemory(ctx, probes); err != nil {
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

// IsCluster reports whether the Store talks to a Cluster (slots matter).
func (s *Store) IsCluster() bool { return s.isCluster() }
