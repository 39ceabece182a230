package hot

import (
	"context"
	"sort"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// Bucket is a bucket written during an observation, with how busy it was.
type Bucket struct {
	State  bucket.State
	Writes int64 // writes seen (a lower bound of the writes made)
	// PerSecond is decisions per second from the native counters read twice (Counted), else
	// writes seen per second; DeniedPerSecond is Counted's only.
	PerSecond, DeniedPerSecond float64
	Counted                    bool
}

// Report is what an observation found.
type Report struct {
	Buckets  []Bucket
	Source   string        // what ranked the keys (SourceTracking)
	Observed time.Duration // how long writes were followed
	Masters  int
	// Keys written, NotBuckets among the busiest, invalidation Messages.
	Keys, NotBuckets, Messages int64
}

// Query says what to observe.
type Query struct {
	Options
	For     time.Duration   // how long to observe (default 1.5 s)
	Limit   int             // the most buckets returned (default 20)
	Resolve bucket.Resolver // each key's layout and spec (nil: detect)
}

// Buckets follows writes for q.For and returns the buckets written most, busiest first,
// read a quarter in (at most 1 s) and at the end: native buckets' rates are their counters'.
func Buckets(ctx context.Context, s *bucket.Store, q Query) (Report, error) {
	if q.For <= 0 {
		q.For = 1500 * time.Millisecond
	}
	if q.Limit <= 0 {
		q.Limit = 20
	}
	rep := Report{Source: SourceTracking}
	t, err := Track(ctx, s, q.Options)
	if err != nil {
		return rep, err
	}
	defer t.Close()
	rep.Masters = len(t.nodes)
	candidates := min(3*q.Limit, 300)
	notBucket := map[string]bool{}
	skip := func(k string) bool { return notBucket[k] }
	read := func(keys []Count) (map[string]bucket.State, error) {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = k.Key
		}
		states, err := s.InspectWith(ctx, names, q.Resolve, q.Custom)
		if err != nil {
			return nil, err
		}
		out := make(map[string]bucket.State, len(states))
		for _, st := range states {
			if st.Exists && st.Problem == "" {
				out[st.Key] = st
			} else {
				notBucket[st.Key] = true
			}
		}
		return out, nil
	}
	wait := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	start := time.Now()
	if err := wait(min(q.For/4, time.Second)); err != nil {
		return rep, err
	}
	first, err := read(t.Top(candidates, nil))
	if err != nil {
		return rep, err
	}
	if err := wait(q.For - time.Since(start)); err != nil {
		return rep, err
	}
	top := t.Top(candidates, skip)
	t.mu.Lock()
	rep.Observed, rep.Keys = time.Since(t.start), int64(len(t.counts))
	t.mu.Unlock()
	rep.Messages = t.messages.Load()
	if err := t.Err(); err != nil {
		return rep, err
	}
	t.Close()
	last, err := read(top)
	if err != nil {
		return rep, err
	}
	rep.NotBuckets = int64(len(notBucket))
	secs := rep.Observed.Seconds()
	for _, c := range top {
		st, ok := last[c.Key]
		if !ok {
			continue
		}
		b := Bucket{State: st, Writes: c.Writes, PerSecond: float64(c.Writes) / secs}
		if p, ok := first[c.Key]; ok && st.Layout.Native && st.Now > p.Now &&
			st.Allowed+st.Denied >= p.Allowed+p.Denied {
			dt := float64(st.Now-p.Now) / 1e6
			b.PerSecond = float64(st.Allowed+st.Denied-p.Allowed-p.Denied) / dt
			b.DeniedPerSecond = float64(st.Denied-p.Denied) / dt
			b.Counted = true
		}
		rep.Buckets = append(rep.Buckets, b)
	}
	sort.SliceStable(rep.Buckets, func(i, j int) bool { return rep.Buckets[i].PerSecond > rep.Buckets[j].PerSecond })
	rep.Buckets = rep.Buckets[:min(len(rep.Buckets), q.Limit)]
	return rep, nil
}
