package scan

import (
	"context"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/hot"
)

// Live is the data behind top: a Watchlist within a budget, the buckets being written now
// read first (a hot.Follower), and what each refresh cost.
type Live struct {
	st   *bucket.Store
	opts WatchOptions
	wl   *Watchlist
	keep string
	hot  *hot.Follower
}

// LiveRefresh is one refresh of a Live view.
type LiveRefresh struct {
	Watch WatchResult
	// Hot are the writes per second of the hot buckets; HotNote why there are none.
	Hot     map[string]float64
	HotNote string
	Took    time.Duration
}

// NewLive returns a Live view of the buckets matching o.Match on st.
func NewLive(st *bucket.Store, o WatchOptions) *Live {
	return &Live{st: st, opts: o, hot: hot.NewFollower(o.Match, hot.Options{Custom: o.Custom, NodeClient: o.NodeClient})}
}

// Close ends following writes.
func (l *Live) Close() { l.hot.Close() }

// Keep keeps key in every refresh while it exists.
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
