package bucket

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// Client is the go-redis surface the Store needs. *redis.Client (standalone and Sentinel
// failover), *redis.ClusterClient and *redis.Ring all satisfy it.
//
// Configure the client with MaxRetries: -1 for decisions: go-redis otherwise re-sends a
// command after a dropped connection, and a consume the server already applied would be
// applied twice. The Store itself retries only on NOSCRIPT, which proves nothing ran.
type Client = redis.UniversalClient

// Store runs bucket decisions and reads against Redis. It is safe for concurrent use, and
// concurrent decisions (Take, TakeAll) share round trips: see WithCoalescing.
type Store struct {
	rdb   Client
	now   func() time.Time // nil: Redis server TIME
	grace string
	keep  bool // a given spec that differs from the stored one is refused (WithStoredSpec)
	args  atomic.Pointer[argsEntry]
	co    *coalescer // nil: every Take is its own round trip

	readMode atomic.Int32 // how reads send the read script (read.go)
	// nativeFirst: the last scanned page was mostly native buckets, so the next is read
	// with plain commands first; nativeOff: the ACL refuses them (read_native.go).
	nativeFirst, nativeOff atomic.Bool
}

// Option configures a Store.
type Option func(*Store)

// WithClientClock makes the script use the caller's clock instead of Redis TIME, for
// managed servers that reject TIME in scripts and for deterministic tests. Keep the
// callers' clocks in sync: the script never moves a bucket's time backwards, but a fast
// clock refills early.
func WithClientClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithTTLGrace sets how long a bucket is kept after it would be full again (default 60 s).
// A missing bucket starts full, so expiry after that is lossless but for the counters.
// When an allow must extend the TTL, it adds half the grace again as headroom, so that
// the next allows find it long enough and only read it.
func WithTTLGrace(d time.Duration) Option {
	return func(s *Store) { s.grace = strconv.FormatInt(d.Milliseconds(), 10) }
}

// WithStoredSpec makes decisions keep a bucket's stored spec: a Take whose spec differs
// from the one an existing native bucket stores is refused (an error wrapping
// ErrSpecDiffers that names the stored spec) and writes nothing; without it the given
// spec is written into the bucket, as an application that changed its spec wants. A tool
// acting on another application's buckets uses it: its flags never rewrite the
// application's spec.
func WithStoredSpec() Option { return func(s *Store) { s.keep = true } }

// NewStore returns a Store over rdb.
func NewStore(rdb Client, opts ...Option) *Store {
	s := &Store{rdb: rdb, co: &coalescer{lanes: defaultLanes}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Redis returns the underlying client.
func (s *Store) Redis() Client { return s.rdb }

// Through returns a Store like s whose decisions go through rdb, never coalesced: for
// example a client whose Process uses one connection of its own.
func (s *Store) Through(rdb Client) *Store {
	d := s.Direct()
	d.rdb = rdb
	return d
}

// SHA is the SHA1 of the native script, as EVALSHA knows it.
func (s *Store) SHA() string { return nativeScript().Hash() }

// argsEntry caches the boxed ARGV of the last spec and cost used: the hot path of a load
// test or a busy application passes the same spec every time and allocates nothing for it.
type argsEntry struct {
	spec Spec
	cost float64
	args []interface{}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (s *Store) argv(spec Spec, cost float64, peek bool) []interface{} {
	if !peek && s.now == nil {
		if e := s.args.Load(); e != nil && e.spec == spec && e.cost == cost {
			return e.args
		}
	}
	var capS, rateS string
	if !spec.IsZero() {
		capS, rateS = fmtFloat(spec.Capacity), fmtFloat(spec.Rate)
	}
	// The cost goes when it is not 1 or options follow (the script reads none as 1).
	args := []interface{}{capS, rateS}
	keep := s.keep && !peek
	options := s.now != nil || peek || s.grace != "" || keep
	if cost != 1 || options {
		args = append(args, fmtFloat(cost))
	}
	if options {
		now := ""
		if s.now != nil {
			now = strconv.FormatInt(s.now().UnixMicro(), 10)
		}
		mode := "take"
		if peek {
			mode = "peek"
		}
		args = append(args, now, mode, s.grace)
		if keep {
			args = append(args, "keep")
		}
	}
	if !peek && s.now == nil {
		s.args.Store(&argsEntry{spec: spec, cost: cost, args: args})
	}
	return args
}

func (s *Store) check(key string, spec Spec, cost float64) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if !spec.IsZero() {
		if err := spec.Validate(); err != nil {
			return err
		}
	}
	return spec.ValidateCost(cost)
}

// Take consumes cost tokens from the bucket at key if it holds them, atomically: one
// EVALSHA, in a round trip of its own or shared with concurrent decisions (WithCoalescing).
// A zero spec takes the capacity and rate stored in the bucket.
func (s *Store) Take(ctx context.Context, key string, spec Spec, cost float64) (Result, error) {
	if err := s.check(key, spec, cost); err != nil {
		return Result{}, err
	}
	v, err := s.run(ctx, nativeScript(), key, nil, s.argv(spec, cost, false))
	if err != nil {
		return Result{}, s.decisionErr(key, err, func(err error) error { return scriptErr(key, err) })
	}
	return nativeResult(v, spec, cost)
}

// Peek computes the decision Take would make without writing anything: it runs the script
// with EVALSHA_RO (Redis >= 7), falling back to plain EVALSHA on older servers, where the
// script's peek mode still writes nothing.
func (s *Store) Peek(ctx context.Context, key string, spec Spec, cost float64) (Result, error) {
	if err := s.check(key, spec, cost); err != nil {
		return Result{}, err
	}
	keys := []string{key}
	args := s.argv(spec, cost, true)
	v, err := nativeScript().RunRO(ctx, s.rdb, keys, args...).Result()
	if err != nil && isUnknownCommand(err) {
		v, err = nativeScript().Run(ctx, s.rdb, keys, args...).Result()
	}
	if err != nil {
		s.networkErr(err)
		return Result{}, scriptErr(key, err)
	}
	return nativeResult(v, spec, cost)
}

// LoadScript loads the native scripts (single and multi-tier) on every master (one for a standalone or Sentinel
// client) and returns the addresses it loaded on.
func (s *Store) LoadScript(ctx context.Context) (sha string, nodes []string, err error) {
	src := scripts.TokenBucket()
	load := func(ctx context.Context, c *redis.Client) error {
		got, err := c.ScriptLoad(ctx, src).Result()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		if got != s.SHA() {
			return fmt.Errorf("%s: script SHA %s, want %s", c.Options().Addr, got, s.SHA())
		}
		// The multi-tier script too, so TakeAll never pays for a NOSCRIPT round trip.
		if err := c.ScriptLoad(ctx, scripts.MultiBucket()).Err(); err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		nodes = append(nodes, c.Options().Addr)
		return nil
	}
	err = s.ForEachMaster(ctx, load)
	return s.SHA(), nodes, err
}

// ForEachMaster calls fn for every master: each master of a Cluster, each shard of a Ring,
// or the one server of a standalone or Sentinel client. Calls are made one at a time, in
// the order of the masters' addresses.
func (s *Store) ForEachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	// go-redis calls the callback of ForEachMaster and ForEachShard concurrently.
	var (
		mu      sync.Mutex
		clients []*redis.Client
	)
	collect := func(_ context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		clients = append(clients, m)
		return nil
	}
	var err error
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, collect)
	case *redis.Ring:
		err = c.ForEachShard(ctx, collect)
	case *redis.Client:
		return fn(ctx, c)
	default:
		return fmt.Errorf("unsupported client type %T", s.rdb)
	}
	if err != nil {
		s.networkErr(err)
		return err
	}
	sort.Slice(clients, func(i, j int) bool { return clients[i].Options().Addr < clients[j].Options().Addr })
	return forEach(ctx, clients, fn)
}

func forEach(ctx context.Context, clients []*redis.Client, fn func(context.Context, *redis.Client) error) error {
	var errs []error
	for _, c := range clients {
		if err := fn(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
