package bucket

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Target says how to read one key: its layout (nil: detect it) and spec (zero: unknown).
type Target struct {
	Layout *Layout
	Spec   Spec
	Cost   float64 // the cost a check assumes (default 1)
	Source string  // where layout and spec came from (a rule name, "flags", ...)
}

// Resolver maps a key to its Target; rules from the config file and flags implement it.
type Resolver func(key string) Target

// State is a bucket as read from Redis, refilled to the server's now when its spec is known.
type State struct {
	Key             string
	Type            string // the key's Redis type
	Exists          bool
	Layout          Layout
	Detected        bool   // the layout was recognised, not configured
	Guess           string // why a detected layout is a guess; such a key is never written
	Bare            bool   // a lone bare number with no layout declared
	Verdict         Verdict
	Problem         string // the Verdict's text and why
	Counter         string // the counter limiter whose key this most likely is
	Stored          Level  // tokens at the last update
	Now             int64  // the server's time of the read (µs)
	Spec            Spec
	SpecSource      string        // "bucket", a rule name, "flags" or "" (unknown)
	Tokens          float64       // the level refilled to Now (with a spec)
	TTL             time.Duration // -1 no TTL, -2 no key
	Allowed, Denied int64         // the native decision counters
	Ahead           time.Duration // how far the stored time is ahead of Now
	TAT             *TAT          // a GCRA bucket's stored TAT
}

// HasSpec reports whether capacity and rate are known.
func (s State) HasSpec() bool { return !s.Spec.IsZero() }

// LevelKnown reports whether Tokens says the level: a GCRA bucket's needs the spec.
func (s State) LevelKnown() bool { return s.HasSpec() || s.TAT == nil }

// Age is how long ago the bucket was last updated.
func (s State) Age() time.Duration {
	if !s.Exists || s.Stored.TS == 0 {
		return 0
	}
	return time.Duration(s.Now-s.Stored.TS) * time.Microsecond
}

// Fill is Tokens/Capacity in [0,1] (0 when the spec is unknown).
func (s State) Fill() float64 {
	if !s.HasSpec() {
		return 0
	}
	return s.Tokens / s.Spec.Capacity
}

// TimeToFull is how long until the application sees the bucket full, by refill or expiry.
func (s State) TimeToFull() time.Duration {
	if !s.HasSpec() {
		return 0
	}
	return s.Decide(0).ResetAfter
}

// UpdatedAt is the time of the last update.
func (s State) UpdatedAt() time.Time { return time.UnixMicro(s.Stored.TS) }

// Peek is the decision a request of cost would get now, computed from the state.
func (s State) Peek(cost float64) (Result, error) {
	if !s.HasSpec() && !s.Exists && s.Problem == "" {
		return Result{}, fmt.Errorf("%w: %q does not exist (%w)", ErrNoSpec, s.Key, ErrNoKey)
	}
	if !s.HasSpec() {
		return Result{}, fmt.Errorf("%w: %q", ErrNoSpec, s.Key)
	}
	if s.Problem != "" {
		return Result{}, s.NotBucketError()
	}
	return s.Decide(cost).Result, nil
}

// Inspect reads buckets by name in one round trip, detecting unresolved layouts.
func (s *Store) Inspect(ctx context.Context, keys []string, resolve Resolver) ([]State, error) {
	return s.InspectWith(ctx, keys, resolve, nil)
}

// InspectWith is Inspect with a config file's custom layouts, whose time keys it reads too.
func (s *Store) InspectWith(ctx context.Context, keys []string, resolve Resolver, custom []Layout) ([]State, error) {
	states, _, err := s.readKeys(ctx, s.rdb, keys, readOpts{ScanRead: ScanRead{Resolve: resolve, Pairs: TwoKeyLayouts(custom)}, cluster: s.IsCluster()})
	return states, err
}

// MemoryUsage is MEMORY USAGE of every key in one round trip, in bytes (0: gone).
func (s *Store) MemoryUsage(ctx context.Context, keys []string) ([]int64, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.MemoryUsage(ctx, k)
	}
	_, err := pipe.Exec(ctx)
	if err != nil && !isPerCommand(err) {
		s.networkErr(err)
		return nil, fmt.Errorf("memory usage: %w", err)
	}
	out := make([]int64, len(keys))
	for i, c := range cmds {
		v, err := c.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("memory usage %s: %w", strconv.Quote(keys[i]), err)
		}
		out[i] = v
	}
	return out, nil
}

// IsCluster reports whether the Store talks to a Cluster (slots matter).
func (s *Store) IsCluster() bool {
	_, ok := s.rdb.(*redis.ClusterClient)
	return ok
}
