package redistest

import (
	"testing"
	"time"
)

func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	s := StartSentinel(t)
	ctx := ctxT(t)

	if s.MasterName() != "mymaster" || len(s.SentinelAddrs()) != 3 {
		t.Fatalf("MasterName() = %q, SentinelAddrs() = %v", s.MasterName(), s.SentinelAddrs())
	}
	before := s.MasterAddr(t)
	c := s.FailoverClient(t)
	if err := c.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	s.Failover(t)
	t.Logf("failover took %v", time.Since(start).Round(time.Millisecond))

	after := s.MasterAddr(t)
	if after == before {
		t.Fatalf("master still %s after Failover", after)
	}
	// The same client now writes to the new master, which kept the data.
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "before" {
		t.Errorf("GET k after failover = %q, %v", got, err)
	}
	if err := c.Set(ctx, "k", "after", 0).Err(); err != nil {
		t.Fatalf("SET after failover: %v", err)
	}
	role, err := c.Do(ctx, "ROLE").Slice()
	if err != nil || role[0] != "master" {
		t.Errorf("ROLE through the failover client = %v, %v", role, err)
	}

	// And back: the old master was turned into a replica and can be promoted.
	s.Failover(t)
	if got := s.MasterAddr(t); got != before {
		t.Errorf("master after the second failover = %s, want %s", got, before)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "after" {
		t.Errorf("GET k after the second failover = %q, %v", got, err)
	}
	if err := c.Set(ctx, "k", "again", 0).Err(); err != nil {
		t.Fatalf("SET after the second failover: %v", err)
	}
}
