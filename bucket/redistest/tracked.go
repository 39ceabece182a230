package redistest

import (
	"sync"
	"testing"
)

// tracked is the set of clients a Cluster or Sentinel handed out: each is closed when its
// test ends, and the live ones are refreshed after a failover.
type tracked[C interface {
	comparable
	Close() error
}] struct {
	mu sync.Mutex
	m  map[C]struct{}
}

// add tracks c until t ends, then closes it.
func (s *tracked[C]) add(t testing.TB, c C) C {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[C]struct{}{}
	}
	s.m[c] = struct{}{}
	s.mu.Unlock()
	t.Cleanup(func() {
		s.mu.Lock()
		delete(s.m, c)
		s.mu.Unlock()
		_ = c.Close()
	})
	return c
}

// list is the clients tracked now.
func (s *tracked[C]) list() []C {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]C, 0, len(s.m))
	for c := range s.m {
		out = append(out, c)
	}
	return out
}
