package httplimit

import (
	"container/list"
	"sync"

	"github.com/bucketctl/bucketctl/bucket"
)

// Local configures FailLocal's in-process buckets.
type Local struct {
	MaxKeys int // the buckets kept (default 10000); the least recently used goes first
	// Scale multiplies every tier's capacity (never below the cost) and rate (default 1):
	// with N instances, 1/N keeps the total near the configured limits.
	Scale float64
}

// localBuckets is a bounded LRU of bucket levels, decided with bucket.TakeAllModel.
type localBuckets struct {
	max   int
	mu    sync.Mutex
	order *list.List // of *localEntry, most recent first
	byKey map[string]*list.Element
}

type localEntry struct {
	key   string
	level bucket.Level
}

func newLocalBuckets(max int) *localBuckets {
	return &localBuckets{max: max, order: list.New(), byKey: make(map[string]*list.Element)}
}

func (lb *localBuckets) takeAll(tiers []bucket.Tier, now int64) bucket.MultiResult {
	levels := make([]bucket.Level, len(tiers))
	exists := make([]bool, len(tiers))
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for i, t := range tiers {
		if e, ok := lb.byKey[t.Key]; ok {
			levels[i], exists[i] = e.Value.(*localEntry).level, true
		}
	}
	out, written, r := bucket.TakeAllModel(tiers, levels, exists, now)
	if written {
		for i, t := range tiers {
			lb.put(t.Key, out[i])
		}
	}
	return r
}

func (lb *localBuckets) put(key string, l bucket.Level) {
	if e, ok := lb.byKey[key]; ok {
		e.Value.(*localEntry).level = l
		lb.order.MoveToFront(e)
		return
	}
	lb.byKey[key] = lb.order.PushFront(&localEntry{key: key, level: l})
	for lb.order.Len() > lb.max {
		last := lb.order.Back()
		lb.order.Remove(last)
		delete(lb.byKey, last.Value.(*localEntry).key)
	}
}
