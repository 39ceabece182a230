package scan

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/bucket/hot"
)

// Watchlist is top's view of a keyspace of any size: each Refresh re-reads the buckets it
// keeps, then scans on within a budget of commands, keeping the Keep emptiest, most denied
// and first by name.
type Watchlist struct {
	s      *bucket.Store
	sc     *Scanner
	keep   int
	budget int64
	kept   map[string]bucket.State
	pinned string
	hot    []string // keys being written now (see Hot): read every refresh, kept while hot
	next   string   // the kept bucket the next re-read begins with

	pass, passKeys, lastPass int64
	limit, passBuckets       int64
	pruned, whole            bool // this pass dropped a bucket; the last whole pass dropped none
	dbsize, lastDBSize       int64
}

// WatchOptions configure a Watchlist.
type WatchOptions struct {
	Options
	// Keep is the buckets kept per ordering (default 200, at most half the budget's reads).
	Keep int
	// Budget is the most commands one Refresh sends (default 10,000).
	Budget int64
	// PerSecond, above 0, sets Budget from a rate over refreshes every Interval.
	PerSecond int64
	Interval  time.Duration
	// Limit, above 0, ends each pass after this many buckets.
	Limit int64
	// NodeClient builds the clients a Live view follows writes with (hot.Options).
	NodeClient hot.NodeClient
}

// WatchResult is one refresh: the buckets kept (in no order; Whole: every bucket there is),
// the keys scanned this pass, the refresh's cost, and the hot keys that read as no bucket.
type WatchResult struct {
	States                      []bucket.State
	Scanned, DBSize, Passes     int64
	Commands, RoundTrips, Pages int64
	Whole                       bool
	NotBuckets                  []string
}

// NewWatchlist prepares a Watchlist over s (nothing is read until Refresh).
func NewWatchlist(ctx context.Context, s *bucket.Store, o WatchOptions) (*Watchlist, error) {
	if o.Keep <= 0 {
		o.Keep = 200
	}
	if o.PerSecond > 0 && o.Interval > 0 {
		o.Budget = max(int64(float64(o.PerSecond)*o.Interval.Seconds()), 50)
	}
	if o.Budget <= 0 {
		o.Budget = 10000
	}
	if o.Count <= 0 || o.Count > o.Budget/4 {
		o.Count = min(200, max(10, o.Budget/4))
	}
	o.Keep = max(1, min(o.Keep, int((o.Budget/2-2)/3))) // a re-read takes at most half the budget
	sc, err := New(ctx, s, o.Options)
	if err != nil {
		return nil, err
	}
	return &Watchlist{s: s, sc: sc, keep: o.Keep, budget: o.Budget, limit: o.Limit, kept: map[string]bucket.State{}, dbsize: -1}, nil
}

// Refresh re-reads the kept buckets and scans on within the budget, as the cost hook counts it.
func (w *Watchlist) Refresh(ctx context.Context) (WatchResult, error) {
	before, c := w.sc.Stats(), &cost.Counter{}
	startPages, ctx := before.Pages, cost.With(ctx, c)
	spent := func() int64 { return int64(c.Commands()) }
	var res WatchResult
	if w.dbsize < 0 {
		n, err := w.sc.DBSize(ctx)
		if err != nil {
			return res, err
		}
		w.dbsize = n
	}
	if len(w.kept) > 0 || w.pinned != "" || len(w.hot) > 0 {
		if err := w.reread(ctx, &res); err != nil {
			return res, err
		}
	}
	// A page is begun while a whole page of single reads fits in what is left.
	for room := w.budget - spent() - 2; room >= w.sc.o.Count; room = w.budget - spent() - 2 {
		var page []bucket.State
		var err error
		if w.limit > 0 && w.passBuckets >= w.limit {
			err = ErrEnd // the pass ends at the limit
		} else {
			page, err = w.sc.NextWithin(ctx, room+1) // the reads and TIME
		}
		st := w.sc.Stats()
		w.passKeys, before = st.Keys-before.Keys+w.passKeys, st
		if errors.Is(err, errNoRoom) {
			break
		}
		if errors.Is(err, ErrEnd) {
			w.sc.Restart()
			w.passBuckets = 0
			w.pass++
			w.lastPass, w.passKeys = w.passKeys, 0
			w.whole, w.pruned = !w.pruned, false
			w.lastDBSize, w.dbsize = w.dbsize, -1
			break
		}
		if err != nil {
			return res, err
		}
		for _, s := range page {
			if s.Problem == "" && (w.limit == 0 || w.passBuckets < w.limit) {
				w.kept[s.Key] = s
				w.passBuckets++
			}
		}
		w.prune()
	}
	res.Pages = w.sc.Stats().Pages - startPages
	res.Commands, res.RoundTrips = spent(), int64(c.RoundTrips())
	res.States = slices.Collect(maps.Values(w.kept))
	res.Scanned, res.DBSize, res.Passes, res.Whole = w.passKeys, max(w.dbsize, 0), w.pass, w.whole
	if res.Scanned == 0 {
		res.Scanned, res.DBSize = w.lastPass, w.lastDBSize
	}
	return res, nil
}

// reread reads the pinned key, the hot keys and the kept buckets within half the budget; those
// that do not fit keep their last reading and go first next time. A key no longer a bucket
// is dropped (a hot one reported in NotBuckets).
func (w *Watchlist) reread(ctx context.Context, res *WatchResult) error {
	keys := make([]string, 0, len(w.kept)+1+len(w.hot))
	seen := make(map[string]bool, cap(keys))
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	add(w.pinned)
	hot := make(map[string]bool, len(w.hot))
	for _, k := range w.hot {
		add(k)
		hot[k] = true
	}
	kept := slices.Sorted(maps.Keys(w.kept))
	// From where the last re-read stopped, so that every kept bucket has its turn.
	i := sort.SearchStrings(kept, w.next)
	for _, k := range append(kept[i:], kept[:i]...) {
		add(k)
	}
	r := w.sc.read
	r.Most = w.budget / 2
	states, n, err := w.s.ReadScanned(ctx, keys, r)
	if err != nil {
		return err
	}
	w.next = ""
	if n < len(keys) {
		w.next = keys[n]
	}
	found := make(map[string]bool, len(states))
	for _, st := range states {
		if st.Exists && st.Problem == "" {
			w.kept[st.Key] = st
			found[st.Key] = true
		}
	}
	for _, k := range keys[:n] {
		if !found[k] {
			delete(w.kept, k)
			if hot[k] {
				res.NotBuckets = append(res.NotBuckets, k)
			}
		}
	}
	return nil
}

// Keep keeps key among the buckets kept while it exists; "" keeps none.
func (w *Watchlist) Keep(key string) { w.pinned = key }

// Hot makes keys being written now read and kept on every refresh until the next call.
func (w *Watchlist) Hot(keys []string) { w.hot = keys }

// prune keeps the Keep emptiest, most denied and first by name, and the pinned key.
func (w *Watchlist) prune() {
	if len(w.kept) <= 3*w.keep {
		return
	}
	all := slices.Collect(maps.Values(w.kept))
	keep := map[string]bool{w.pinned: true}
	for _, k := range w.hot {
		keep[k] = true
	}
	pick := func(less func(a, b bucket.State) bool) {
		sort.Slice(all, func(i, j int) bool { return less(all[i], all[j]) })
		for _, s := range all[:min(w.keep, len(all))] {
			keep[s.Key] = true
		}
	}
	pick(func(a, b bucket.State) bool { return fillOrder(a) < fillOrder(b) })
	pick(func(a, b bucket.State) bool { return a.Denied > b.Denied })
	pick(func(a, b bucket.State) bool { return a.Key < b.Key })
	for k := range w.kept {
		if !keep[k] {
			delete(w.kept, k)
			w.pruned = true
		}
	}
}

// fillOrder ranks buckets emptiest first; without a spec, by stored tokens.
func fillOrder(s bucket.State) float64 {
	if s.HasSpec() {
		return s.Fill()
	}
	return 1 + s.Tokens
}
