package bucket

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/slot"
	"github.com/bucketctl/bucketctl/scripts"
)

var readScript = scripts.Lazy(func() string { return scripts.Read })

// pipeliner is the Store's client, or a master's during a scan.
type pipeliner = Client

// readOpts say how to read and classify a batch of keys (Client aside).
type readOpts struct {
	ScanRead
	scanned bool // keys from SCAN: a vanished key and a two-key bucket's time key are dropped
	cluster bool
}

// keyRead is the raw reply for one key.
type keyRead struct {
	typ        string
	pttl, size int64
	str        string // a string's value, when read (hasStr)
	hasStr     bool
	hash       []interface{} // a hash's fields and values, when read
	pairs      []pairKey
	pairVals   []*string // pairs[i]'s value, nil when it is not a short string
}

// readBuf is a page read's scratch, reused across pages.
type readBuf struct {
	targets []Target
	reads   []keyRead
	nows    []int64
	native  []nativeCmds
	batch   []redis.Cmder
}

var readBufs = sync.Pool{New: func() any { return new(readBuf) }}

// sized makes *s n zero values, reallocated only when too small.
func sized[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	clear(*s)
	return *s
}

// pairKey may form a two-key bucket with the key read: its time key, or (isMain) its main key.
type pairKey struct {
	key    string
	layout *Layout
	isMain bool
}

// pairKeys are the keys that may form a two-key bucket with key.
func pairKeys(key string, t Target, layouts []Layout) []pairKey {
	if t.Layout != nil {
		if t.Layout.Type != Strings {
			return nil
		}
		layouts = []Layout{*t.Layout}
	}
	out := make([]pairKey, 0, len(layouts))
	for i := range layouts {
		l := &layouts[i]
		if main, ok := l.TokensKeyOf(key); ok {
			out = append(out, pairKey{key: main, layout: l, isMain: true})
		} else if tk, ok := l.TimeKeyOf(key); ok {
			out = append(out, pairKey{key: tk, layout: l})
		}
	}
	return out
}

// readKeys reads keys in one pipelined round trip (a Cluster's cross-slot pairs take a
// second) and classifies each, in order, less the dropped; n is how many fit o.Most.
func (s *Store) readKeys(ctx context.Context, c pipeliner, keys []string, o readOpts) (states []State, n int, err error) {
	buf := readBufs.Get().(*readBuf)
	defer readBufs.Put(buf)
	targets := sized(&buf.targets, len(keys))
	for i, k := range keys {
		if o.Resolve != nil {
			targets[i] = o.Resolve(k)
		}
	}
	var pairs [][]pairKey // nil: worked out by readPage for the keys the script reads
	if o.Most > 0 || !o.scanned {
		pairs = make([][]pairKey, len(keys))
		for i, k := range keys {
			pairs[i] = pairKeys(k, targets[i], o.Pairs)
		}
	}
	if o.Most > 0 {
		keys = keys[:fitting(keys, pairs, o.Most, o.cluster)]
	}
	if len(keys) == 0 {
		return nil, 0, nil
	}
	sized(&buf.reads, len(keys))
	nows, err := s.readPage(ctx, c, keys, targets, pairs, buf, o)
	if err != nil {
		return nil, 0, err
	}
	out := o.Into[:0]
	if cap(out) < len(keys) {
		out = make([]State, 0, len(keys))
	}
	for i, k := range keys {
		st := classify(k, targets[i], &buf.reads[i], nows[i], o.scanned)
		if isDrop(st) {
			continue
		}
		out = append(out, st)
	}
	return out, len(keys), nil
}

// fitting is how many of keys a read of at most most commands takes, each at its worst case
// (TIME, its read, a GETRANGE per companion key in another Cluster slot).
func fitting(keys []string, pairs [][]pairKey, most int64, cluster bool) int {
	spent := int64(1) // TIME
	for i, k := range keys {
		c := int64(1)
		if cluster {
			for _, p := range pairs[i] {
				if slot.Of(p.key) != slot.Of(k) {
					c++
				}
			}
		}
		if spent+c > most {
			return i
		}
		spent += c
	}
	return len(keys)
}

// ReadScanned reads keys SCAN returned; n is how many fit in r.Most commands.
func (s *Store) ReadScanned(ctx context.Context, keys []string, r ScanRead) (states []State, n int, err error) {
	var p pipeliner = s.rdb
	if r.Client != nil {
		p = r.Client
	}
	return s.readKeys(ctx, p, keys, readOpts{ScanRead: r, scanned: true, cluster: s.IsCluster()})
}

// ScanRead says how ReadScanned reads a page of keys.
type ScanRead struct {
	Client  *redis.Client // the master SCAN ran on (nil: the Store's client)
	Most    int64         // the most commands the read sends (0: no cap)
	Resolve Resolver
	Pairs   []Layout // the two-key layouts (TwoKeyLayouts)
	Into    []State  // a buffer the states are written to, from its start
	// NativeFirst reads native buckets with GETRANGE and PTTL first (Most 0); Native, if
	// set, is told how the page went.
	NativeFirst bool
	Native      *NativeRead
}

// NativeRead is how a scanned page went: most of it held native values; the ACL refused
// GETRANGE or PTTL (the page was read with the script).
type NativeRead struct{ Mostly, Refused bool }

// readPipeline sends TIME and the read script for every key, and fills reads.
func (s *Store) readPipeline(ctx context.Context, c pipeliner, keys []string, pairs [][]pairKey, reads []keyRead, cluster bool) (int64, error) {
	mode := s.readMode.Load()
	var script interface{} = readScript().Hash()
	if mode&callEval != 0 {
		script = scripts.Read
	}
	args := []interface{}{maxBucketFields, maxReadLen}
	timeCmd := redis.NewTimeCmd(ctx, "time")
	calls := make([]*redis.Cmd, len(keys))
	for i, k := range keys {
		ks := make([]string, 1, 1+len(pairs[i]))
		ks[0] = k
		for _, p := range pairs[i] {
			if !cluster || slot.Of(p.key) == slot.Of(k) {
				ks = append(ks, p.key)
			}
		}
		calls[i] = evalCmd(ctx, callNames[mode], script, ks, args)
	}
	mode, err := sendCalls(ctx, c, calls, timeCmd, mode, readRetry)
	s.readMode.Store(mode)
	if err == nil {
		err = readErr(timeCmd, calls...)
	}
	if err != nil && !isPerCommand(err) {
		s.networkErr(err)
		return 0, err
	}
	now := s.serverNow(timeCmd)
	for i, cmd := range calls {
		if err := cmd.Err(); err != nil {
			return 0, fmt.Errorf("read: %w", err)
		}
		if err := parseRead(cmd, pairs[i], keys[i], cluster, &reads[i]); err != nil {
			return 0, err
		}
	}
	return now, nil
}

// maxReadLen is the longest string the read transfers (a json state is at most 100 bytes).
const maxReadLen = 128

func parseRead(cmd *redis.Cmd, pairs []pairKey, key string, cluster bool, r *keyRead) error {
	v, err := cmd.Slice()
	if err != nil || len(v) < 4 {
		return fmt.Errorf("read %q: unexpected reply %v (%v)", key, v, err)
	}
	r.typ, _ = v[0].(string)
	r.pttl, _ = v[1].(int64)
	r.size, _ = v[2].(int64)
	r.str, r.hasStr = v[3].(string)
	r.hash, _ = v[3].([]interface{})
	r.pairs = pairs
	r.pairVals = make([]*string, len(pairs))
	j := 4
	for i, p := range pairs {
		if cluster && slot.Of(p.key) != slot.Of(key) {
			continue // read in the second round trip
		}
		if j < len(v) {
			if s, ok := v[j].(string); ok {
				r.pairVals[i] = &s
			}
		}
		j++
	}
	return nil
}

// readCrossSlot reads, in one more round trip, the pair keys in another Cluster slot than
// their key, for keys holding a number only.
func (s *Store) readCrossSlot(ctx context.Context, keys []string, pairs [][]pairKey, reads []keyRead) error {
	type ref struct {
		i, j int
		cmd  *redis.StringCmd
	}
	var refs []ref
	var pipe redis.Pipeliner
	for i, k := range keys {
		r := &reads[i]
		if r.typ != "string" {
			continue
		}
		if _, ok := parseNumberForm(r.str); !ok {
			continue
		}
		for j, p := range pairs[i] {
			if slot.Of(p.key) == slot.Of(k) {
				continue
			}
			if pipe == nil {
				pipe = s.rdb.Pipeline()
			}
			refs = append(refs, ref{i, j, pipe.GetRange(ctx, p.key, 0, maxNumberLen)})
		}
	}
	if pipe == nil {
		return nil
	}
	_, err := pipe.Exec(ctx)
	if err != nil && !isPerCommand(err) {
		s.networkErr(err)
		return err
	}
	for _, rf := range refs {
		if v, err := rf.cmd.Result(); err == nil && v != "" && len(v) <= maxNumberLen {
			reads[rf.i].pairVals[rf.j] = &v
		}
	}
	return nil
}

// readErr is the first error of cmds that fails the whole read, else the last one's.
func readErr[C redis.Cmder](first redis.Cmder, cmds ...C) error {
	err := first.Err()
	for _, c := range cmds {
		if err == nil || isPerCommand(err) {
			err = c.Err()
		}
	}
	return err
}

// serverNow is the time of a read: the server's TIME, the client's when it was refused.
func (s *Store) serverNow(t *redis.TimeCmd) int64 {
	switch v, err := t.Result(); {
	case s.now != nil:
		return s.now().UnixMicro()
	case err == nil:
		return v.UnixMicro()
	}
	return time.Now().UnixMicro()
}

// isPerCommand reports whether a pipeline error is one command's reply, not the read's.
func isPerCommand(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) {
		return true
	}
	var re redis.Error
	return errors.As(err, &re) && !failsRead(err)
}

// failsRead recognises the replies that fail every command of a read: loading, cluster
// down, not authenticated, or NOPERM.
func failsRead(err error) bool {
	if redis.IsPermissionError(err) {
		return true
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "CLUSTERDOWN") ||
		strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS")
}
