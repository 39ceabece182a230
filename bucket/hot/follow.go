package hot

import (
	"context"
	"errors"
	"sync"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rules"
)

const (
	hotCandidates = 10    // the keys written most that each refresh reads
	hotMinWrites  = 2     // the writes seen in a refresh for a key to count as hot
	maxNotBuckets = 10000 // keys remembered as not buckets (never read again)
)

// A Follower hands a live view, refresh by refresh, the keys matching its pattern written
// most since the last refresh. Nothing starts after Close.
type Follower struct {
	mu        sync.Mutex
	closed    bool
	tracker   *Tracker
	note      string // why hot buckets are unavailable
	notBucket map[string]bool
	rates     map[string]float64 // writes/s of the keys handed out
	opts      Options
	match     string
}

// NewFollower follows the writes to the keys matching the glob match from the first Next.
func NewFollower(match string, o Options) *Follower {
	o.Prefixes = nil
	h := &Follower{notBucket: map[string]bool{}, match: match, opts: o}
	if pre := rules.GlobPrefix(match); pre != "" {
		h.opts.Prefixes = []string{pre}
	}
	return h
}

// Next returns the hot candidates since the last call; Done gives their writes per second.
func (h *Follower) Next(ctx context.Context, st *bucket.Store) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rates = map[string]float64{}
	if h.note != "" || h.closed {
		return nil
	}
	if h.tracker != nil && h.tracker.Err() != nil {
		h.tracker.Close() // a master stopped answering: start again
		h.tracker = nil
	}
	if h.tracker == nil { // nil again when unreachable: the refresh says so, the next one retries
		t, err := Track(ctx, st, h.opts)
		var he *UnsupportedError
		if errors.As(err, &he) {
			h.note = he.Reason()
		}
		h.tracker = t
		return nil
	}
	skip := func(k string) bool { return h.notBucket[k] || !rules.GlobMatch(h.match, k) }
	top := h.tracker.Top(hotCandidates, skip)
	secs := max(h.tracker.Reset().Seconds(), 0.001)
	var keys []string
	for _, c := range top {
		if c.Writes >= hotMinWrites {
			keys = append(keys, c.Key)
			h.rates[c.Key] = float64(c.Writes) / secs
		}
	}
	return keys
}

// Done takes what was read (keys that are no bucket are not read again) and returns the hot
// buckets' writes/s by key.
func (h *Follower) Done(states []bucket.State, notBuckets []string) map[string]float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.notBucket) > maxNotBuckets {
		clear(h.notBucket)
	}
	for _, k := range notBuckets {
		h.notBucket[k] = true
		delete(h.rates, k)
	}
	if len(h.rates) == 0 {
		return nil
	}
	out := map[string]float64{}
	for _, s := range states {
		if r, ok := h.rates[s.Key]; ok {
			out[s.Key] = r
		}
	}
	return out
}

// Note says why hot buckets are unavailable, or "".
func (h *Follower) Note() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.note
}

// Close stops following writes.
func (h *Follower) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.tracker != nil {
		h.tracker.Close()
		h.tracker = nil
	}
}
