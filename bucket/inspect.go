package bucket

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Target says how to read one key: its layout (nil: detect it) and spec (zero: unknown,
// or stored in the bucket for the native layout).
type Target struct {
	Layout *Layout
	Spec   Spec
	// Cost is the cost a check assumes (default 1).
	Cost float64
	// Source says where the layout and spec came from (a rule name, "flags", ...).
	Source string
}

// Resolver maps a key to its Target; rules from the config file and flags implement it.
type Resolver func(key string) Target

// State is a bucket as read from Redis, refilled to the server's now when its spec is known.
type State struct {
	Key string
	// Type is the Redis type of the key: hash, string, none, list, ...
	Type   string
	Exists bool
	// Layout is the layout used to read it; Detected says it was recognised, not configured.
	Layout   Layout
	Detected bool
	// Guess is set when the layout was guessed from a lone bare number (a gcra TAT) that no
	// rule or --layout declares: it says why the reading is a guess and how to declare the
	// layout. Deadlines, leases and counters store bare numbers too, so such a key is shown,
	// marked, and never written or deleted.
	Guess string
	// Bare is set for a lone bare number read with no layout declared for it (a guess or
	// not): writing or deleting it needs a declaration, never just a better look.
	Bare bool
	// Problem is set when the key is not a readable bucket (another type, unknown fields).
	Problem string
	// Counter names the counter or window limiter whose key this most likely is, when its
	// form says so (LookupCounter); such a key is never a bucket.
	Counter string
	// Stored is the level as stored: tokens at the last update.
	Stored Level
	// Now is the Redis server time of the read (microseconds).
	Now int64
	// Spec is the known spec; SpecSource is "bucket", a rule name, "flags" or "" (unknown).
	Spec       Spec
	SpecSource string
	// Tokens is the level refilled to Now (only when the spec is known).
	Tokens float64
	// TTL is the key's time to live: -1 no TTL, -2 no key.
	TTL time.Duration
	// Allowed and Denied are the native decision counters.
	Allowed, Denied int64
	// Ahead is how far the stored time is ahead of the server's Now (0 when it is not):
	// written by a client whose clock runs fast.
	Ahead time.Duration
	// TAT is the stored theoretical arrival time of a GCRA bucket (nil for other layouts
	// and a missing key): its decisions are computed from it (see gcra_state.go).
	TAT *TAT
}

// HasSpec reports whether capacity and rate are known.
func (s State) HasSpec() bool { return !s.Spec.IsZero() }

// LevelKnown reports whether Tokens and Stored.Tokens say the bucket's level: with its spec,
// or as stored by a layout that stores tokens. A GCRA bucket stores a TAT, whose level
// needs the spec: without it, Tokens is 0 and says nothing.
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

// TimeToFull is how long until the application sees the bucket full (0 when the spec is
// unknown): by refill, or by the key's expiry when that comes first (State.Decide).
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

// Inspect reads buckets by name in one pipelined round trip (see read.go) and returns their
// states in the order of keys. Keys whose layout is unknown are detected from their shape. A
// missing key is returned with Exists false (every layout reads it as full). Nothing is
// written.
func (s *Store) Inspect(ctx context.Context, keys []string, resolve Resolver) ([]State, error) {
	return s.InspectWith(ctx, keys, resolve, nil)
}

// InspectWith is Inspect with the custom layouts of a config file, so their time keys are
// found too.
func (s *Store) InspectWith(ctx context.Context, keys []string, resolve Resolver, custom []Layout) ([]State, error) {
	states, _, err := s.readKeys(ctx, s.rdb, keys, readOpts{resolve: resolve, pairLayouts: TwoKeyLayouts(custom), cluster: s.isCluster()})
	return states, err
}

func (s *Store) isCluster() bool {
	_, ok := s.rdb.(*redis.ClusterClient)
	return ok
}
