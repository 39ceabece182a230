package scan

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// ErrStop, returned by a States or Keys callback, ends the scan without an error.
var ErrStop = errors.New("stop scan")

// The streaming scan: SCAN page -> one pipelined read (read.go) -> states handed on -> page
// dropped. Client memory is bounded by the page, not by the keyspace, and every figure of
// its Redis cost is counted (Stats), by the client's own hook (package cost).

// Options say what to scan.
type Options struct {
	// Match is the SCAN MATCH pattern (a Redis glob); "" is "*".
	Match string
	// Count is the SCAN COUNT hint and so about the keys per page (default 500).
	Count int64
	// Resolve maps keys to their configured layout and spec (nil: detect every key).
	Resolve bucket.Resolver
	// Custom are the config file's layouts, so their two-key buckets are found too.
	Custom []bucket.Layout
	// MaxCount, when above Count, lets a selective pattern raise the COUNT hint (doubling
	// it while pages come back less than a quarter full, up to MaxCount), so a pattern that
	// matches one key in ten does not cost ten times the round trips. 0: Count throughout.
	MaxCount int64
	// The following are States': BucketsOnly hands on buckets only (the others are
	// counted in Stats.Other); Limit, above 0, ends the scan after this many buckets
	// (Stats.Truncated; Keys: this many keys); CountKeys reads DBSIZE first (Stats.DBSize), for a share
	// of the keyspace covered; OnPage, when set, is called after each page with the counts
	// so far (a progress line).
	BucketsOnly bool
	Limit       int64
	CountKeys   bool
	OnPage      func(Stats)
}

// Stats count what a scan read and what it cost.
type Stats struct {
	// Keys is how many keys SCAN returned; Buckets and Other how many of them were buckets
	// and not (time keys of two-key buckets, and keys gone since SCAN, are in neither).
	Keys, Buckets, Other int64
	// Pages, Commands and RoundTrips are the Redis cost: SCAN pages, commands sent (SCAN,
	// one read per key, TIME) and round trips (a pipeline a Cluster client splits over
	// masters is one per master), as the cost hook counted them on the wire.
	Pages, Commands, RoundTrips int64
	// Masters is how many masters are scanned; Done says every master's scan has ended.
	Masters int
	Done    bool
	// Truncated says States stopped at Options.Limit; DBSize is the keys on all
	// masters when the scan began (Options.CountKeys; 0: not read).
	Truncated bool
	DBSize    int64
}

// Scanner walks the keys matching a pattern on every master, a page at a time, taking the
// masters in turn so that a limit stops every master's scan alike. It is resumable: top keeps
// one across refreshes and takes as many pages as its budget allows each time.
type Scanner struct {
	s       *bucket.Store
	o       Options
	resolve bucket.Resolver
	pairs   []bucket.Layout // the two-key layouts, worked out once
	nodes   []*scanNode
	turn    int
	stats   Stats
	cost    cost.Counter // what the scan sent (Stats.Commands, RoundTrips)
}

type scanNode struct {
	c      *redis.Client
	cursor uint64
	count  int64
	done   bool
	// held are keys SCAN returned that a page capped by NextWithin left for the next one,
	// or whose read failed; moved says a slot moved since (MOVED): they are read through
	// the Cluster client, which follows redirects.
	held  []string
	moved bool
}

// New prepares a scan of every master of s (nothing is read until Next). It puts the
// counting hook on s's client (cost.Install), which counts the scan's cost.
func New(ctx context.Context, s *bucket.Store, o Options) (*Scanner, error) {
	if o.Count <= 0 {
		o.Count = 500
	}
	if o.Match == "" {
		o.Match = "*"
	}
	cost.Install(s.Redis())
	sc := &Scanner{s: s, o: o}
	err := s.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		sc.nodes = append(sc.nodes, &scanNode{c: c, count: o.Count})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sc.stats.Masters = len(sc.nodes)
	sc.resolve, sc.pairs = o.Resolve, bucket.TwoKeyLayouts(o.Custom)
	return sc, nil
}

// errNoRoom: a capped page could not read even one key (they are held for the next call).
var errNoRoom = errors.New("scan: no room for a read in the page's budget")

// Next reads the next page: SCAN on the next master whose scan has not ended, then one read
// of the page's keys. It returns io.EOF when every master's scan has ended. A page may hold
// no states (SCAN may return an empty page).
func (sc *Scanner) Next(ctx context.Context) ([]bucket.State, error) { return sc.NextWithin(ctx, 0) }

// NextWithin is Next sending at most most commands for the page's reads (0: no cap), TIME
// included and SCAN not: each key is reckoned at its worst case (bucket.Store.ReadScanned).
// COUNT is only a hint: SCAN returns whole hash-table buckets and may pass it by a few keys.
// The keys that do not fit are held and read by the next call, before any new SCAN.
// errNoRoom says that not even the first of them fits.
func (sc *Scanner) NextWithin(ctx context.Context, most int64) ([]bucket.State, error) {
	ctx = cost.With(ctx, &sc.cost)
	n, keys, err := sc.nextKeys(ctx)
	if err != nil {
		return nil, err
	}
	sent := sc.cost.Commands()
	c := n.c
	if n.moved {
		c = nil
	}
	states, read, err := sc.s.ReadScanned(ctx, c, keys, most, sc.resolve, sc.pairs)
	if err != nil && c != nil && (redis.HasErrorPrefix(errors.Unwrap(err), "MOVED") || redis.HasErrorPrefix(errors.Unwrap(err), "ASK")) {
		// A slot moved since SCAN (resharding): read through the Cluster client, which
		// follows redirects, within what the failed read left of most.
		n.moved = true
		if left := most - int64(sc.cost.Commands()-sent); most > 0 && left <= 0 {
			err = errNoRoom
		} else {
			states, read, err = sc.s.ReadScanned(ctx, nil, keys, max(left, 0), sc.resolve, sc.pairs)
		}
	}
	if err != nil {
		// Nothing of the page was taken: its keys are read again by the next call (SCAN
		// has moved on), so a failed read skips none.
		n.held = append([]string(nil), keys...)
		return nil, err
	}
	n.held = nil
	if read < len(keys) {
		n.held = append([]string(nil), keys[read:]...)
		if read == 0 {
			return nil, errNoRoom
		}
	}
	n.moved = n.moved && len(n.held) > 0
	for _, st := range states {
		if st.Problem == "" {
			sc.stats.Buckets++
		} else {
			sc.stats.Other++
		}
	}
	if sc.allDone() {
		sc.stats.Done = true
	}
	return states, nil
}

// nextKeys returns the keys of the next page: those a capped page held back, or else a SCAN
// page of the next master whose scan has not ended (io.EOF: none is left).
func (sc *Scanner) nextKeys(ctx context.Context) (*scanNode, []string, error) {
	for _, n := range sc.nodes {
		if len(n.held) > 0 {
			keys := n.held
			n.held = nil
			return n, keys, nil
		}
	}
	var n *scanNode
	for i := 0; i < len(sc.nodes); i++ {
		cand := sc.nodes[(sc.turn+i)%len(sc.nodes)]
		if !cand.done {
			n, sc.turn = cand, (sc.turn+i+1)%len(sc.nodes)
			break
		}
	}
	if n == nil {
		sc.stats.Done = true
		return nil, nil, io.EOF
	}
	addr := n.c.Options().Addr
	keys, next, err := n.c.Scan(ctx, n.cursor, sc.o.Match, n.count).Result()
	if err != nil {
		rediserr.ReloadSlots(sc.s.Redis(), err)
		return nil, nil, fmt.Errorf("scan %s: %w", addr, err)
	}
	n.cursor, n.done = next, next == 0
	if int64(len(keys)) < sc.o.Count/4 && n.count < sc.o.MaxCount {
		n.count = min(2*n.count, sc.o.MaxCount)
	}
	sc.stats.Pages++
	sc.stats.Keys += int64(len(keys))
	return n, keys, nil
}

func (sc *Scanner) allDone() bool {
	for _, n := range sc.nodes {
		if !n.done || len(n.held) > 0 {
			return false
		}
	}
	return true
}

// Stats returns the counts so far.
func (sc *Scanner) Stats() Stats {
	st := sc.stats
	st.Commands, st.RoundTrips = int64(sc.cost.Commands()), int64(sc.cost.RoundTrips())
	return st
}

// Restart begins a new pass over the keyspace (the counts go on).
func (sc *Scanner) Restart() {
	for _, n := range sc.nodes {
		n.cursor, n.done, n.held, n.moved = 0, false, nil, false
	}
	sc.stats.Done = false
}

// DBSize is the number of keys on all masters (DBSIZE, one command per master, counted in
// the scan's cost): what share of the keyspace a scan has covered.
func (sc *Scanner) DBSize(ctx context.Context) (int64, error) {
	ctx = cost.With(ctx, &sc.cost)
	var total int64
	for _, n := range sc.nodes {
		v, err := n.c.DBSize(ctx).Result()
		if err != nil {
			return 0, fmt.Errorf("dbsize %s: %w", n.c.Options().Addr, err)
		}
		total += v
	}
	return total, nil
}

// States scans every master of s and hands each page's states to fn, in SCAN order: the
// one scan of list, inspect --match, reset --match and audit. The next page is scanned and
// read while fn handles this one (see Pages). The states of keys that are not buckets are
// handed on too (Problem set) unless o.BucketsOnly; o.Limit ends the scan after that many
// buckets, in the middle of a page. fn may stop the scan by returning ErrStop.
func States(ctx context.Context, s *bucket.Store, o Options, fn func([]bucket.State) error) (Stats, error) {
	sc, err := New(ctx, s, o)
	if err != nil {
		return Stats{}, err
	}
	var dbsize int64
	if o.CountKeys {
		dbsize, _ = sc.DBSize(ctx) // a share not shown is no failure
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stats Stats
	found := int64(0)
	for p := range sc.Pages(ctx, 1) {
		stats = p.Stats
		stats.DBSize = dbsize
		if p.Err != nil {
			return stats, p.Err
		}
		keep := p.States[:0]
		for _, st := range p.States {
			if st.Problem != "" && o.BucketsOnly {
				continue
			}
			if st.Problem == "" {
				if o.Limit > 0 && found >= o.Limit {
					stats.Truncated = true
					break
				}
				found++
			}
			keep = append(keep, st)
		}
		if len(keep) > 0 {
			if err := fn(keep); err != nil {
				if errors.Is(err, ErrStop) {
					return stats, nil
				}
				return stats, err
			}
		}
		if stats.Truncated {
			return stats, nil
		}
		if o.OnPage != nil {
			o.OnPage(stats)
		}
		if err := ctx.Err(); err != nil {
			return stats, err
		}
	}
	return stats, ctx.Err()
}

// Keys walks the key names matching o.Match on every master of s with a Scanner's SCAN
// pages (the masters in turn, COUNT raised up to o.MaxCount for a selective pattern, the
// cost counted) but reads no key: for shell completion. fn gets each page and may stop the
// walk by returning ErrStop; o.Limit, above 0, stops it once that many keys were handed on
// (the last page is cut). Resolve, Custom and the other States options play no part.
func Keys(ctx context.Context, s *bucket.Store, o Options, fn func([]string) error) error {
	sc, err := New(ctx, s, o)
	if err != nil {
		return err
	}
	ctx = cost.With(ctx, &sc.cost)
	for handed := int64(0); o.Limit <= 0 || handed < o.Limit; {
		_, keys, err := sc.nextKeys(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if o.Limit > 0 && handed+int64(len(keys)) > o.Limit {
			keys = keys[:o.Limit-handed]
		}
		handed += int64(len(keys))
		if err := fn(keys); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// Page is one page of a scan and the counts up to it.
type Page struct {
	States []bucket.State
	Stats  Stats
	// Err ends the scan (never io.EOF: the channel is closed at the end instead).
	Err error
}

// Pages reads ahead: a goroutine scans and reads the next pages while the caller handles
// the current one, at most ahead pages buffered (memory stays bounded by ahead+2 pages), so
// the server's work and the client's overlap on two cores. The channel is closed when the
// scan ends or fails (the last Page carries the error); cancel ctx to stop it early.
func (sc *Scanner) Pages(ctx context.Context, ahead int) <-chan Page {
	ch := make(chan Page, ahead)
	go func() {
		defer close(ch)
		for {
			states, err := sc.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			p := Page{States: states, Stats: sc.Stats(), Err: err}
			select {
			case ch <- p:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}
