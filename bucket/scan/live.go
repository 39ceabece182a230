package scan

import (
	"context"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/hot"
)

// Live is the data behind top: a Watchlist, which spends a budget of commands per refresh
// (re-reading the buckets it keeps, then scanning on where it stopped) and keeps the
// emptiest, most denied and first-named buckets whatever the keyspace's size; the buckets
// being written now, read first (a hot.Follower); and what each refresh cost Redis, as the
// client's own hook counts it (package cost): the figures the budget is kept by.
type Live struct {
	st   *bucket.Store
	opts WatchOptions
	wl   *Watchlist
	keep string
	hot  *hot.Follower
}

// LiveRefresh is one refresh of a Live view.
type LiveRefresh struct {
	// Watch is the Watchlist's refresh: the buckets kept and how far the scan has come.
	Watch WatchResult
	// Hot are the writes per second of the hot buckets among Watch.States; HotNote says why
	// there are none to be had ("" when following writes works).
	Hot     map[string]float64
	HotNote string
	// Took is how long the refresh took (what it sent is Watch.Commands and RoundTrips).
	Took time.Duration
}

// NewLive returns a Live view of the buckets matching o.Match on st, within o's budget
// (nothing is read until Refresh).
func NewLive(st *bucket.Store, o WatchOptions) *Live {
	return &Live{st: st, opts: o, hot: hot.NewFollower(o.Match, hot.Options{Custom: o.Custom, NodeClient: o.NodeClient})}
}

// Close ends following writes.
func (l *Live) Close() { l.hot.Close() }

// Keep keeps key (the bucket the user is looking at) in every refresh while it exists.
func (l *Live) Keep(key string) {
	l.keep = key
	if l.wl != nil {
		l.wl.Keep(key)
	}
}

// Refresh runs one refresh within the budget.
func (l *Live) Refresh(ctx context.Context) (LiveRefresh, error) {
	start := time.Now()
	if l.wl == nil {
		wl, err := NewWatchlist(ctx, l.st, l.opts)
		if err != nil {
			return LiveRefresh{}, err
		}
		l.wl = wl
		wl.Keep(l.keep)
	}
	l.wl.Hot(l.hot.Next(ctx, l.st))
	res, err := l.wl.Refresh(ctx)
	if err != nil {
		return LiveRefresh{}, err
	}
	return LiveRefresh{Watch: res, Hot: l.hot.Done(res.States, res.NotBuckets), HotNote: l.hot.Note(),
		Took: time.Since(start)}, nil
}
