package scan

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// ErrStop, returned by a States or Keys callback, ends the scan without an error.
var ErrStop = errors.New("stop scan")

// ErrEnd is Next's error once every master's scan has ended (never a lost connection's
// io.EOF, which ends a scan with that error).
var ErrEnd = errors.New("scan: every key was scanned")

// Options say what to scan.
type Options struct {
	Match    string // the SCAN MATCH glob; "" is "*"
	Count    int64  // the SCAN COUNT hint (default 500)
	MaxCount int64  // above Count: COUNT doubles while pages come back under a quarter full
	Resolve  bucket.Resolver
	Custom   []bucket.Layout // the config's layouts, so their two-key buckets are found too
	// States' options (Limit caps Keys' keys too).
	BucketsOnly, CountKeys bool // leave out keys that are not buckets; DBSIZE first
	Limit                  int64
	OnPage                 func(Stats)
}

// Stats count what a scan read (time keys and keys gone since SCAN are neither buckets nor
// other) and what it cost on the wire.
type Stats struct {
	Keys, Buckets, Other        int64
	Pages, Commands, RoundTrips int64
	Masters                     int
	Done                        bool
	Truncated                   bool // States stopped at Options.Limit
	DBSize                      int64
}

// Scanner walks the keys matching a pattern on every master in turn, a page at a time; it
// is resumable (top keeps one across refreshes).
type Scanner struct {
	s     *bucket.Store
	o     Options
	read  bucket.ScanRead     // the resolver and two-key layouts, worked out once
	free  chan []bucket.State // pages States is done with, for the next reads
	nodes []*scanNode
	turn  int
	stats Stats
	cost  cost.Counter // what the scan sent (Stats.Commands, RoundTrips)
	// ahead: each master's next SCAN is sent as soon as its cursor is known (an unlimited
	// States), so the server walks the keyspace while the page before is read.
	ahead bool
	// native[i%2] is how page i-2 went, which says how page i reads (not i-1, which a
	// read ahead cannot wait for; so both walks send the same commands).
	native    [2]nativeHint
	pagesRead int
}

// nativeHint: a page reads native buckets first when the one two before was mostly native
// buckets, unless the ACL refused that on their line of pages.
type nativeHint bucket.NativeRead

func (h nativeHint) first() bool { return h.Mostly && !h.Refused }

// then is the hint a page of keys read with h leaves for the page two after it (an empty
// page leaves h).
func (h nativeHint) then(keys []string, got bucket.NativeRead) nativeHint {
	if len(keys) == 0 {
		return h
	}
	got.Refused = got.Refused || h.Refused
	return nativeHint(got)
}

type scanReply struct {
	keys []string
	next uint64
	err  error
}

type scanNode struct {
	c      *redis.Client
	cursor uint64
	count  int64
	done   bool
	// held are keys left for the next call (a capped page, a failed read); moved: read
	// them through the Cluster client, which follows MOVED.
	held    []string
	moved   bool
	pending chan scanReply // the SCAN sent ahead, if any
}

// New prepares a scan of every master of s, counting its cost (cost.Install).
func New(ctx context.Context, s *bucket.Store, o Options) (*Scanner, error) {
	if o.Count <= 0 {
		o.Count = 500
	}
	if o.Match == "" {
		o.Match = "*"
	}
	cost.Install(s.Redis())
	sc := &Scanner{s: s, o: o, free: make(chan []bucket.State, 3),
		read: bucket.ScanRead{Resolve: o.Resolve, Pairs: bucket.TwoKeyLayouts(o.Custom)}}
	err := s.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		sc.nodes = append(sc.nodes, &scanNode{c: c, count: o.Count})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sc.stats.Masters = len(sc.nodes)
	return sc, nil
}

// errNoRoom: a capped page could not read even one key (they are held for the next call).
var errNoRoom = errors.New("scan: no room for a read in the page's budget")

// Next reads the next page (possibly empty); ErrEnd when every master's scan has ended.
func (sc *Scanner) Next(ctx context.Context) ([]bucket.State, error) { return sc.NextWithin(ctx, 0) }

// NextWithin is Next sending at most most commands for the reads (0: no cap; SCAN not
// counted); the keys that do not fit are read by the next call, errNoRoom if none fits.
func (sc *Scanner) NextWithin(ctx context.Context, most int64) ([]bucket.State, error) {
	ctx = cost.With(ctx, &sc.cost)
	n, keys, scanned, err := sc.nextKeys(ctx)
	if errors.Is(err, ErrEnd) {
		sc.stats.Done = true
	}
	if err != nil {
		return nil, err
	}
	if scanned {
		sc.stats.Pages++
		sc.stats.Keys += int64(len(keys))
	}
	states, read, moved, err := sc.readKeys(ctx, n.c, n.moved, keys, most, &sc.native[sc.pagesRead%2])
	if err != nil {
		// The next call reads the page again, so a failed read skips no key.
		n.held, n.moved = append([]string(nil), keys...), moved
		return nil, err
	}
	n.held = nil
	if read < len(keys) {
		n.held = append([]string(nil), keys[read:]...)
		if read == 0 {
			return nil, errNoRoom
		}
	}
	n.moved = moved && len(n.held) > 0
	sc.pagesRead++
	sc.count(states, sc.allDone())
	return states, nil
}

// readKeys reads keys from c, or through the Cluster client when moved or when a slot moved
// since SCAN (moved then true), within most commands (0: no cap); read is how many it read.
// hint says how to read the page, and takes what it leaves for the page two after it.
func (sc *Scanner) readKeys(ctx context.Context, c *redis.Client, moved bool, keys []string, most int64, hint *nativeHint) (states []bucket.State, read int, _ bool, err error) {
	sent := sc.cost.Commands()
	var got bucket.NativeRead
	r := sc.read
	r.Client, r.Most, r.NativeFirst, r.Native = c, most, hint.first(), &got
	if moved {
		r.Client = nil
	}
	select {
	case r.Into = <-sc.free:
	default:
	}
	states, read, err = sc.s.ReadScanned(ctx, keys, r)
	if err != nil && r.Client != nil && (redis.HasErrorPrefix(errors.Unwrap(err), "MOVED") || redis.HasErrorPrefix(errors.Unwrap(err), "ASK")) {
		moved = true
		if left := most - int64(sc.cost.Commands()-sent); most > 0 && left <= 0 {
			err = errNoRoom
		} else {
			r.Client, r.Most = nil, max(left, 0)
			states, read, err = sc.s.ReadScanned(ctx, keys, r)
		}
	}
	if err == nil && read > 0 {
		*hint = hint.then(keys, got)
	}
	return states, read, moved, err
}

// count adds a page read to the stats.
func (sc *Scanner) count(states []bucket.State, done bool) {
	for _, st := range states {
		if st.Problem == "" {
			sc.stats.Buckets++
		} else {
			sc.stats.Other++
		}
	}
	sc.stats.Done = sc.stats.Done || done
}

// nextKeys returns the keys held back, else (scanned) a SCAN page of the next master
// (ErrEnd: none).
func (sc *Scanner) nextKeys(ctx context.Context) (_ *scanNode, _ []string, scanned bool, _ error) {
	for _, n := range sc.nodes {
		if len(n.held) > 0 {
			keys := n.held
			n.held = nil
			return n, keys, false, nil
		}
	}
	var n *scanNode
	for i := range sc.nodes {
		if cand := sc.nodes[(sc.turn+i)%len(sc.nodes)]; !cand.done {
			n, sc.turn = cand, (sc.turn+i+1)%len(sc.nodes)
			break
		}
	}
	if n == nil {
		return nil, nil, false, ErrEnd
	}
	send := func(cursor uint64, count int64) scanReply {
		keys, next, err := n.c.Scan(ctx, cursor, sc.o.Match, count).Result()
		return scanReply{keys, next, err}
	}
	var r scanReply
	if n.pending != nil {
		r, n.pending = <-n.pending, nil
	} else {
		r = send(n.cursor, n.count)
	}
	if r.err != nil {
		rediserr.ReloadSlots(sc.s.Redis(), r.err)
		return nil, nil, false, fmt.Errorf("scan %s: %w", n.c.Options().Addr, r.err)
	}
	n.cursor, n.done = r.next, r.next == 0
	if int64(len(r.keys)) < sc.o.Count/4 && n.count < sc.o.MaxCount {
		n.count = min(2*n.count, sc.o.MaxCount)
	}
	if sc.ahead && !n.done {
		ch, cursor, count := make(chan scanReply, 1), n.cursor, n.count
		n.pending = ch
		go func() { ch <- send(cursor, count) }()
	}
	return n, r.keys, true, nil
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
		n.cursor, n.done, n.held, n.moved, n.pending = 0, false, nil, false, nil
	}
	sc.stats.Done = false
}

// DBSize is the number of keys on all masters, counted in the scan's cost.
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

// States hands each page's states to fn in SCAN order, reading the next pages meanwhile: the
// scan of list, inspect, reset and audit. fn may return ErrStop; the page is reused after it.
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
	stats, found := Stats{}, int64(0)
	for p := range sc.pages(ctx) {
		stats = p.stats
		stats.DBSize = dbsize
		if p.err != nil {
			return stats, p.err
		}
		keep := p.states[:0]
		for _, st := range p.states {
			if st.Problem == "" && o.Limit > 0 && found >= o.Limit {
				stats.Truncated = true
				break
			}
			if st.Problem == "" {
				found++
			} else if o.BucketsOnly {
				continue
			}
			keep = append(keep, st)
		}
		if len(keep) > 0 {
			if err := fn(keep); errors.Is(err, ErrStop) {
				return stats, nil
			} else if err != nil {
				return stats, err
			}
		}
		if stats.Truncated {
			return stats, nil
		}
		select {
		case sc.free <- p.states[:0]:
		default:
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

// Keys hands fn the key names of each SCAN page, reading no key (shell completion); o.Limit
// caps the keys. fn may return ErrStop.
func Keys(ctx context.Context, s *bucket.Store, o Options, fn func([]string) error) error {
	sc, err := New(ctx, s, o)
	if err != nil {
		return err
	}
	ctx = cost.With(ctx, &sc.cost)
	for handed := int64(0); o.Limit <= 0 || handed < o.Limit; {
		_, keys, _, err := sc.nextKeys(ctx)
		if errors.Is(err, ErrEnd) {
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
