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

// Client is the go-redis client the Store needs. Give it MaxRetries -1: a re-sent decision
// would be applied twice (the Store re-sends only after NOSCRIPT, which proves nothing ran).
type Client = redis.UniversalClient

// Store runs bucket decisions and reads against Redis, safe for concurrent use.
type Store struct {
	rdb   Client
	now   func() time.Time // nil: Redis server TIME
	grace string
	keep  bool // a given spec that differs from the stored one is refused (WithStoredSpec)
	args  atomic.Pointer[argsEntry]
	co    *coalescer // nil: every Take is its own round trip

	readMode atomic.Int32 // how reads send the read script (read.go)
}

type Option func(*Store)

// WithClientClock makes the script use the caller's clock instead of Redis TIME (servers
// that reject TIME in scripts, tests). A bucket's time never moves back; a fast clock refills early.
func WithClientClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithTTLGrace sets how long a bucket is kept after it would be full again (default 60 s);
// a missing bucket starts full, so only the counters are lost.
func WithTTLGrace(d time.Duration) Option {
	return func(s *Store) { s.grace = strconv.FormatInt(d.Milliseconds(), 10) }
}

// WithStoredSpec refuses a Take whose spec differs from the bucket's stored one (ErrSpecDiffers).
func WithStoredSpec() Option { return func(s *Store) { s.keep = true } }

// NewStore returns a Store over rdb.
func NewStore(rdb Client, opts ...Option) *Store {
	s := &Store{rdb: rdb, co: &coalescer{lanes: defaultLanes}}
	for _, o := range opts {
		o(s)
	}
	return s
}

func (s *Store) Redis() Client { return s.rdb }

// Through returns a Store like s, never coalesced, whose decisions go through rdb.
func (s *Store) Through(rdb Client) *Store {
	d := s.Direct()
	d.rdb = rdb
	return d
}

// SHA is the native script's SHA1, as EVALSHA knows it.
func (s *Store) SHA() string { return nativeScript().Hash() }

// argsEntry caches the boxed ARGV of the last spec and cost: a hot path allocates none.
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
	capS, rateS := spec.args()
	args := []interface{}{capS, rateS}
	keep := s.keep && !peek
	options := s.now != nil || peek || s.grace != "" || keep
	if cost != 1 || options {
		args = append(args, fmtFloat(cost))
	}
	if options {
		args = append(args, s.clientNow(), either(peek, "peek", "take"), s.grace)
		if keep {
			args = append(args, "keep")
		}
	}
	if !peek && s.now == nil {
		s.args.Store(&argsEntry{spec: spec, cost: cost, args: args})
	}
	return args
}

// clientNow is the caller's clock as the scripts take it; "" for Redis TIME.
func (s *Store) clientNow() string {
	if s.now == nil {
		return ""
	}
	return strconv.FormatInt(s.now().UnixMicro(), 10)
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

// Take consumes cost tokens from the bucket at key if it holds them, atomically. A zero
// spec takes the bucket's stored capacity and rate.
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

// Peek computes the decision Take would make and writes nothing.
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

// LoadScript loads the native and multi-tier scripts on every master and returns their addresses.
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
		if err := c.ScriptLoad(ctx, scripts.MultiBucket()).Err(); err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		nodes = append(nodes, c.Options().Addr)
		return nil
	}
	err = s.ForEachMaster(ctx, load)
	return s.SHA(), nodes, err
}

// ForEachMaster calls fn for every master (Cluster masters, Ring shards, or the one server),
// one at a time in the order of their addresses.
func (s *Store) ForEachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	var mu sync.Mutex
	var clients []*redis.Client
	collect := func(_ context.Context, m *redis.Client) error {
		mu.Lock()
		clients = append(clients, m)
		mu.Unlock()
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
	var errs []error
	for _, c := range clients {
		if err := fn(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
