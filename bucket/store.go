package bucket

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Store runs bucket decisions and reads against Redis.
type Store struct {
	rdb    Client
	script *redis.Script
	now    func() time.Time // nil: Redis server TIME
	grace  string
	args   atomic.Pointer[argsEntry]
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
func WithTTLGrace(d time.Duration) Option {
	return func(s *Store) { s.grace = strconv.FormatInt(d.Milliseconds(), 10) }
}

// NewStore returns a Store over rdb.
func NewStore(rdb Client, opts ...Option) *Store {
	s := &Store{rdb: rdb, script: redis.NewScript(scripts.TokenBucket)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Redis returns the underlying client.
func (s *Store) Redis() Client { return s.rdb }

// SHA is the SHA1 of the native script, as EVALSHA knows it.
func (s *Store) SHA() string { return s.script.Hash() }

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
	args := []interface{}{capS, rateS, fmtFloat(cost)}
	if s.now != nil || peek || s.grace != "" {
		now := ""
		if s.now != nil {
			now = strconv.FormatInt(s.now().UnixMicro(), 10)
		}
		mode := "take"
		if peek {
			mode = "peek"
		}
		args = append(args, now, mode, s.grace)
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

// Take consumes cost tokens from the bucket at key if it holds them, atomically, in one
// round trip. A zero spec takes the capacity and rate stored in the bucket.
func (s *Store) Take(ctx context.Context, key string, spec Spec, cost float64) (Result, error) {
	if err := s.check(key, spec, cost); err != nil {
		return Result{}, err
	}
	keys := [1]string{key}
	v, err := s.script.Run(ctx, s.rdb, keys[:], s.argv(spec, cost, false)...).Slice()
	if err != nil {
		return Result{}, scriptErr(key, err)
	}
	return parseResult(v, spec)
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
	v, err := s.script.RunRO(ctx, s.rdb, keys, args...).Slice()
	if err != nil && isUnknownCommand(err) {
		v, err = s.script.Run(ctx, s.rdb, keys, args...).Slice()
	}
	if err != nil {
		return Result{}, scriptErr(key, err)
	}
	return parseResult(v, spec)
}

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command")
}

// ErrWrongType is returned for a key that holds something other than a bucket.
var ErrWrongType = errors.New("key holds another Redis type")

// ErrForeign is returned when the native script meets a bucket of another layout.
var ErrForeign = errors.New("not a native bucket")

// ErrNoSpec is returned when neither the caller nor the bucket gives capacity and rate.
var ErrNoSpec = errors.New("no capacity/rate known for this bucket")

func scriptErr(key string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGTYPE"):
		return fmt.Errorf("%w: %q is not a bucket", ErrWrongType, key)
	case strings.Contains(msg, "bucketctl: not a native bucket"):
		return fmt.Errorf("%w: %q is another application's bucket, not a native one: consume and load work on native buckets only; use inspect, check or reset", ErrForeign, key)
	case strings.Contains(msg, "bucketctl: no capacity/rate"):
		return fmt.Errorf("%w: %q: pass --capacity and --rate", ErrNoSpec, key)
	case strings.Contains(msg, "ERR bucketctl:"):
		return fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(msg[strings.Index(msg, "bucketctl:"):], "bucketctl: "))
	}
	return err
}

func parseResult(v []interface{}, spec Spec) (Result, error) {
	if len(v) < 4 {
		return Result{}, fmt.Errorf("unexpected script reply %v", v)
	}
	allowed, _ := v[0].(int64)
	rem, _ := v[1].(string)
	retry, _ := v[2].(int64)
	reset, _ := v[3].(int64)
	r := Result{Allowed: allowed == 1, Spec: spec,
		RetryAfter: time.Duration(retry) * time.Microsecond, ResetAfter: time.Duration(reset) * time.Microsecond}
	if retry < 0 {
		r.RetryAfter = -1
	}
	var err error
	if r.Remaining, err = strconv.ParseFloat(rem, 64); err != nil {
		return Result{}, fmt.Errorf("unexpected tokens %q in script reply", rem)
	}
	if len(v) >= 6 {
		c, _ := v[4].(string)
		rt, _ := v[5].(string)
		r.Spec.Capacity, _ = strconv.ParseFloat(c, 64)
		r.Spec.Rate, _ = strconv.ParseFloat(rt, 64)
	}
	return r, nil
}

// LoadScript loads the native scripts (single and multi-tier) on every master (one for a standalone or Sentinel
// client) and returns the addresses it loaded on.
func (s *Store) LoadScript(ctx context.Context) (sha string, nodes []string, err error) {
	src := scripts.TokenBucket
	load := func(ctx context.Context, c *redis.Client) error {
		got, err := c.ScriptLoad(ctx, src).Result()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		if got != s.SHA() {
			return fmt.Errorf("%s: script SHA %s, want %s", c.Options().Addr, got, s.SHA())
		}
		// The multi-tier script too, so TakeAll never pays for a NOSCRIPT round trip.
		if err := c.ScriptLoad(ctx, scripts.MultiBucket).Err(); err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		nodes = append(nodes, c.Options().Addr)
		return nil
	}
	err = s.ForEachMaster(ctx, load)
	return s.SHA(), nodes, err
}

// ForEachMaster calls fn for every master: each master of a Cluster, each shard of a Ring,
// or the one server of a standalone or Sentinel client. Calls are made one at a time.
func (s *Store) ForEachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		var clients []*redis.Client
		if err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			clients = append(clients, m)
			return nil
		}); err != nil {
			return err
		}
		return forEach(ctx, clients, fn)
	case *redis.Ring:
		var clients []*redis.Client
		if err := c.ForEachShard(ctx, func(_ context.Context, m *redis.Client) error {
			clients = append(clients, m)
			return nil
		}); err != nil {
			return err
		}
		return forEach(ctx, clients, fn)
	case *redis.Client:
		return fn(ctx, c)
	}
	return fmt.Errorf("unsupported client type %T", s.rdb)
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
