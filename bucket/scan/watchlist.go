package scan

import (
	"context"
	"errors"
	"io"
	"sort"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/bucket/hot"
)

// Watchlist is top's view of a keyspace of any size at a bounded cost. Each Refresh spends a
// budget of commands: it re-reads the buckets it keeps, then goes on scanning where the last
// refresh stopped, a page at a time, and keeps from every page only the most interesting
// buckets: the emptiest, the most denied, and the first by name, Keep of each. Client memory
// is bounded by Keep and the page; the Redis cost of a refresh by the budget, whatever the
// keyspace. When the scan has covered the keyspace it starts a new pass.
type Watchlist struct {
	s      *bucket.Store
	sc     *Scanner
	keep   int
	budget int64
	kept   map[string]bucket.State
	pinned string
	// hot are keys being written now (see Hot): read every refresh, kept while hot.
	hot []string
	// next is the kept bucket the next re-read begins with (see reread).
	next string

	pass, passKeys, lastPass int64
	limit, passBuckets       int64
	// pruned says the current pass has dropped buckets; whole says the last whole pass
	// dropped none, so the kept buckets are every bucket there is.
	pruned, whole      bool
	dbsize, lastDBSize int64
}

// WatchOptions configure a Watchlist.
type WatchOptions struct {
	Options
	// Keep is how many buckets are kept per ordering (emptiest, most denied, by name):
	// at most 3 × Keep in all (default 200, and at most what half the budget re-reads).
	Keep int
	// Budget is the most commands one Refresh sends (default 10,000).
	Budget int64
	// PerSecond, when above 0, sets Budget from a rate instead: the commands per second
	// spread over refreshes every Interval (at least 50 a refresh).
	PerSecond int64
	Interval  time.Duration
	// Limit, when above 0, ends each pass after this many buckets: the view covers the
	// first Limit buckets SCAN finds, and starts over.
	Limit int64
	// NodeClient builds the clients a Live view follows writes with (hot.Options).
	NodeClient hot.NodeClient
}

// WatchResult is one refresh.
type WatchResult struct {
	// States are the buckets kept, in no particular order.
	States []bucket.State
	// Scanned is the keys scanned in the current pass, DBSize the keys on all masters (read
	// once per pass), Passes the passes completed.
	Scanned, DBSize, Passes int64
	// Commands and RoundTrips are this refresh's Redis cost, as the cost hook counted it:
	// the figures its budget was kept by. Pages are its SCAN pages.
	Commands, RoundTrips, Pages int64
	// Whole says the States are every bucket there is: a whole pass kept them all.
	Whole bool
	// NotBuckets are the hot keys (see Hot) that read as no bucket: gone, or not one.
	NotBuckets []string
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
	// Re-reading the kept buckets (3 × Keep, the pinned one and TIME) takes about half the
	// budget, and never more (see reread), so that every refresh also scans on.
	o.Keep = max(1, min(o.Keep, int((o.Budget/2-2)/3)))
	sc, err := New(ctx, s, o.Options)
	if err != nil {
		return nil, err
	}
	return &Watchlist{s: s, sc: sc, keep: o.Keep, budget: o.Budget, limit: o.Limit, kept: map[string]bucket.State{}, dbsize: -1}, nil
}

// Refresh re-reads the kept buckets and scans on within the budget: what it has spent is
// what the cost hook counted, and only what is yet to be sent is reckoned (a page's SCAN,
// TIME and reads).
func (w *Watchlist) Refresh(ctx context.Context) (WatchResult, error) {
	before := w.sc.Stats()
	startPages := before.Pages
	c := &cost.Counter{}
	ctx = cost.With(ctx, c)
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
	// A page costs SCAN, TIME and a read per key (more in a Cluster, see NextWithin): one is
	// begun while a whole page of single reads fits, and reads no more than the budget has left.
	for room := w.budget - spent() - 2; room >= w.sc.o.Count; room = w.budget - spent() - 2 {
		var page []bucket.State
		var err error
		if w.limit > 0 && w.passBuckets >= w.limit {
			err = io.EOF // the pass ends at the limit
		} else {
			page, err = w.sc.NextWithin(ctx, room+1) // the reads and TIME
		}
		// The keys SCAN returned count as scanned whatever became of their read (held keys
		// are read by a later page).
		st := w.sc.Stats()
		w.passKeys, before = st.Keys-before.Keys+w.passKeys, st
		if errors.Is(err, errNoRoom) {
			break
		}
		if errors.Is(err, io.EOF) {
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
	res.States = make([]bucket.State, 0, len(w.kept))
	for _, s := range w.kept {
		res.States = append(res.States, s)
	}
	res.Scanned, res.DBSize, res.Passes, res.Whole = w.passKeys, max(w.dbsize, 0), w.pass, w.whole
	if res.Scanned == 0 {
		res.Scanned, res.DBSize = w.lastPass, w.lastDBSize
	}
	return res, nil
}

// reread reads the pinned key, the hot keys and the kept buckets by name within half the
// budget, each key at its worst case (bucket.Store.ReadScanned: in a Cluster a two-key
// bucket costs a GETRANGE more), so that every refresh also scans on. The kept buckets that
// do not fit keep their last reading and are read first next time. A key that is gone or
// no bucket is dropped (and a hot one reported in NotBuckets).
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
	kept := make([]string, 0, len(w.kept))
	for k := range w.kept {
		kept = append(kept, k)
	}
	sort.Strings(kept)
	// From where the last re-read stopped, so that every kept bucket has its turn.
	i := sort.SearchStrings(kept, w.next)
	for _, k := range append(kept[i:], kept[:i]...) {
		add(k)
	}
	states, n, err := w.s.ReadScanned(ctx, nil, keys, w.budget/2, w.sc.resolve, w.sc.pairs)
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

// Keep keeps key (a bucket the user is looking at) among the buckets kept for as long as it
// exists, whatever the orderings say; "" keeps none.
func (w *Watchlist) Keep(key string) { w.pinned = key }

// Hot makes keys being written now (from a hot.Tracker) read on every refresh and kept
// whatever the orderings say, until the next call; keys that are not buckets come back in
// WatchResult.NotBuckets. The caller bounds how many.
func (w *Watchlist) Hot(keys []string) { w.hot = keys }

// prune keeps the Keep emptiest, the Keep most denied and the Keep first by name (and the
// pinned key).
func (w *Watchlist) prune() {
	if len(w.kept) <= 3*w.keep {
		return
	}
	all := make([]bucket.State, 0, len(w.kept))
	for _, s := range w.kept {
		all = append(all, s)
	}
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
