package hot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// SourceTracking names client tracking as the source of the ranking.
const SourceTracking = "client-tracking"

const invalidateChannel = "__redis__:invalidate"

// UnsupportedError says the server cannot report written keys: Redis before 6, or an ACL
// refusing CLIENT or SUBSCRIBE.
type UnsupportedError struct {
	Addr   string
	NoPerm bool // the ACL refused a command (else the server has no client tracking)
	Err    error
}

func (e *UnsupportedError) Error() string {
	if e.NoPerm {
		what := "NOPERM"
		if d, _ := rediserr.Denied(e.Err); d.Command != "" {
			what = "NOPERM for " + d.Command
		}
		return fmt.Sprintf("the user may not follow writes on %s (%s): grant it +client|id +client|tracking +subscribe and &%s, or use 'bucketctl top' (it scans)",
			e.Addr, what, invalidateChannel)
	}
	line, _, _ := strings.Cut(e.Err.Error(), "\n")
	return fmt.Sprintf("%s has no client tracking (Redis 6 or later is needed: %s): use 'bucketctl top' (it scans) instead",
		e.Addr, line)
}

// Reason is the short why, for a view that goes on without hot buckets (top).
func (e *UnsupportedError) Reason() string {
	if e.NoPerm {
		return "the user may not follow writes (needs +client|tracking +subscribe); rows come from the scan"
	}
	return "the server has no client tracking (Redis 6+); rows come from the scan"
}

func (e *UnsupportedError) Unwrap() error { return e.Err }

// Options say what a Tracker follows.
type Options struct {
	Prefixes   []string        // track keys starting with one of them (BCAST PREFIX); none: every key
	Custom     []bucket.Layout // the config file's layouts: their time keys count for their buckets
	MaxKeys    int             // distinct keys counted (default 100,000); past it the least seen go
	NodeClient NodeClient      // nil: redis.NewClient
}

// NodeClient builds the client of a dedicated connection from its master's options.
type NodeClient func(*redis.Options) *redis.Client

// Tracker counts the writes each key receives on every master until Close.
type Tracker struct {
	nodes   []*hotNode
	pairs   []bucket.Layout // the two-key layouts, whose time keys fold into their buckets
	maxKeys int
	start   time.Time

	mu       sync.Mutex
	counts   map[string]int64
	floor    int64 // counts at or under it were dropped to bound memory
	err      error
	messages atomic.Int64
	wg       sync.WaitGroup
	closed   atomic.Bool
}

type hotNode struct {
	addr    string
	ps      *redis.PubSub
	closers []io.Closer // in the order opened
}

// Count is the writes seen to a key.
type Count struct {
	Key    string
	Writes int64
}

// Track starts following writes on every master. Close it when done.
func Track(ctx context.Context, s *bucket.Store, o Options) (*Tracker, error) {
	if o.MaxKeys <= 0 {
		o.MaxKeys = 100000
	}
	t := &Tracker{maxKeys: o.MaxKeys, counts: map[string]int64{}, start: time.Now()}
	t.pairs = bucket.TwoKeyLayouts(o.Custom)
	newClient := o.NodeClient
	if newClient == nil {
		newClient = redis.NewClient
	}
	err := s.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := startHotNode(ctx, m, newClient, o.Prefixes)
		if n != nil {
			t.nodes = append(t.nodes, n)
		}
		return err
	})
	if err != nil {
		t.Close()
		return nil, err
	}
	for _, n := range t.nodes {
		t.wg.Go(func() { t.receive(n) })
	}
	return t, nil
}

func startHotNode(ctx context.Context, m *redis.Client, newClient func(*redis.Options) *redis.Client, prefixes []string) (*hotNode, error) {
	n := &hotNode{addr: m.Options().Addr}
	var id atomic.Int64
	subOpt := dedicated(m)
	prev := subOpt.OnConnect
	subOpt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		if prev != nil {
			if err := prev(ctx, cn); err != nil {
				return err
			}
		}
		v, err := cn.ClientID(ctx).Result()
		id.Store(v)
		return err
	}
	sub := newClient(subOpt)
	n.ps = sub.Subscribe(ctx, invalidateChannel)
	n.closers = append(n.closers, sub, n.ps)
	// The confirmation within the read timeout (--timeout): Receive alone would wait for ever.
	if _, err := n.ps.ReceiveTimeout(ctx, max(subOpt.ReadTimeout, 0)); err != nil {
		n.close()
		return nil, hotErr(n.addr, err)
	}
	trk := newClient(dedicated(m))
	conn := trk.Conn()
	n.closers = append(n.closers, trk, conn)
	args := []interface{}{"CLIENT", "TRACKING", "on", "REDIRECT", id.Load(), "BCAST"}
	for _, p := range prefixes {
		args = append(args, "PREFIX", p)
	}
	if err := conn.Do(ctx, args...).Err(); err != nil {
		n.close()
		return nil, hotErr(n.addr, err)
	}
	return n, nil
}

// dedicated are m's options for one connection, never re-sent, in RESP2 (RESP3 gets pushes).
func dedicated(m *redis.Client) *redis.Options {
	o := *m.Options()
	o.Protocol, o.PoolSize, o.MinIdleConns, o.MaxIdleConns, o.MaxActiveConns, o.MaxRetries = 2, 1, 0, 0, 0, -1
	return &o
}

func hotErr(addr string, err error) error {
	if _, denied := rediserr.Denied(err); denied {
		return &UnsupportedError{Addr: addr, NoPerm: true, Err: err}
	}
	var re redis.Error
	msg := strings.ToLower(err.Error())
	if errors.As(err, &re) && (strings.Contains(msg, "unknown subcommand") || strings.Contains(msg, "unknown command") ||
		strings.HasPrefix(msg, "err syntax error, try client")) { // Redis 4 has no CLIENT ID
		return &UnsupportedError{Addr: addr, Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return err
	}
	return fmt.Errorf("follow writes on %s: %w", addr, err)
}

func (n *hotNode) close() {
	for i := len(n.closers) - 1; i >= 0; i-- {
		_ = n.closers[i].Close()
	}
}

func (t *Tracker) receive(n *hotNode) {
	ctx := context.Background()
	seen := map[string]bool{}
	for !t.closed.Load() {
		msg, err := n.ps.Receive(ctx)
		if t.closed.Load() {
			return
		}
		if err != nil {
			var re redis.Error
			if errors.As(err, &re) || strings.Contains(err.Error(), "unsupported pubsub message payload") {
				continue // a flush names no keys; nothing to count
			}
			t.mu.Lock()
			if t.err == nil {
				t.err = fmt.Errorf("following writes on %s: %w", n.addr, err)
			}
			t.mu.Unlock()
			return
		}
		m, ok := msg.(*redis.Message)
		if !ok || m.Channel != invalidateChannel {
			continue
		}
		t.messages.Add(1)
		keys := m.PayloadSlice
		if keys == nil && m.Payload != "" {
			keys = []string{m.Payload}
		}
		clear(seen)
		t.mu.Lock()
		for _, k := range keys {
			k = t.fold(k) // a two-key bucket's keys are written together: one write
			if seen[k] {
				continue
			}
			seen[k] = true
			t.counts[k]++
		}
		if len(t.counts) > t.maxKeys {
			t.shrink()
		}
		t.mu.Unlock()
	}
}

func (t *Tracker) fold(k string) string {
	for _, l := range t.pairs {
		if main, ok := l.TokensKeyOf(k); ok {
			return main
		}
	}
	return k
}

// shrink drops the keys seen least until at most half of MaxKeys are left (t.mu held).
func (t *Tracker) shrink() {
	for len(t.counts) > t.maxKeys/2 {
		t.floor++
		for k, c := range t.counts {
			if c <= t.floor {
				delete(t.counts, k)
			}
		}
	}
}

// Top returns the n keys written most since the start or the last Reset, unless skipped.
func (t *Tracker) Top(n int, skip func(string) bool) []Count {
	t.mu.Lock()
	out := make([]Count, 0, len(t.counts))
	for k, c := range t.counts {
		if skip == nil || !skip(k) {
			out = append(out, Count{Key: k, Writes: c})
		}
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.Writes, a.Writes), strings.Compare(a.Key, b.Key))
	})
	return out[:min(n, len(out))]
}

// Reset starts counting afresh and returns how long the counts it drops covered.
func (t *Tracker) Reset() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := time.Since(t.start)
	t.counts, t.floor, t.start = map[string]int64{}, 0, time.Now()
	return d
}

// Err is the error that stopped following a master, if any: its counts are incomplete.
func (t *Tracker) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Close ends the tracking (with the connections) and waits for the receivers.
func (t *Tracker) Close() {
	if t == nil || t.closed.Swap(true) {
		return
	}
	for _, n := range t.nodes {
		n.close()
	}
	t.wg.Wait()
}
