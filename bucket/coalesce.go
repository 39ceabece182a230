package bucket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Coalescing: concurrent decisions on one Store share round trips.
//
// A Take is one EVALSHA and one round trip. Under load, most of the cost of a decision is
// not the script but the round trip around it: a write and a read system call on each
// side. When many goroutines call Take at once (an HTTP middleware under load), the Store
// sends their decisions together, one pipeline per round trip, each still its own atomic
// EVALSHA with its own key, spec and cost.
//
// Nothing waits for company. At most `lanes` round trips are in flight at once; a Take that
// finds a lane free goes out at once, alone, exactly as without coalescing. Only when every
// lane is busy does a Take queue, and the next lane to come free sends everything queued
// (up to maxCoalesced) in one pipeline: a queued Take waits for one round trip in flight to
// end, no timer. A lone caller never pays for this; a crowd pays one round trip per batch
// instead of one per decision.
//
// Take and TakeAll coalesce. TakeMany (already a pipeline) and Peek make their round trips
// as called.
//
// Lanes are goroutines that live only while there is a queue: a Store holds none at rest
// and needs no Close.

// maxCoalesced bounds the decisions sent in one pipeline.
const maxCoalesced = 128

// defaultLanes is the number of round trips concurrent Takes may have in flight at once
// when coalescing is on (the default). Redis runs scripts one at a time, so more round
// trips in flight do not decide faster, while a batch of queued Takes costs the server less
// per decision than the same Takes sent alone (one script call, one TIME, one reply): with
// 8 callers over 100 keys, one lane costs the server 69-71k instructions per decision, two
// lanes (batches of about 3) 71-73k, each Take alone 92k, go-redis/redis_rate's Allow 73k
// (callgrind: scripts/bench/servercost-callgrind.sh). A lone caller never waits for a lane.
const defaultLanes = 1

// WithCoalescing sets how many round trips concurrent decisions (Take, TakeAll) may have
// in flight at once; decisions beyond that queue and share the next free round trip. 0
// turns coalescing off: every decision is its own round trip, whatever the concurrency (a
// load generator that simulates independent clients wants that).
func WithCoalescing(lanes int) Option {
	return func(s *Store) {
		if lanes <= 0 {
			s.co = nil
			return
		}
		s.co = &coalescer{lanes: lanes}
	}
}

// Direct returns a Store like s (same client, clock and TTL grace) whose decisions are
// each their own round trip, never coalesced.
func (s *Store) Direct() *Store {
	return &Store{rdb: s.rdb, now: s.now, grace: s.grace}
}

type coalescer struct {
	mu     sync.Mutex
	queue  []*scriptCall
	active int // lanes in flight: direct calls and lane goroutines
	lanes  int
}

// scriptCall is one queued decision: a writing script's EVALSHA. done receives once, when
// v and err (the raw reply) are set.
type scriptCall struct {
	ctx  context.Context
	sc   *redis.Script
	key1 [1]string // keys of a one-key call, without an allocation
	keys []string
	args []interface{}
	v    interface{}
	err  error
	done chan struct{}
}

var callPool = sync.Pool{New: func() any { return &scriptCall{done: make(chan struct{}, 1)} }}

// run runs a writing script once (see runOnce) on keys, or on key alone when keys is nil,
// sharing a round trip with concurrent decisions when the Store coalesces. The error is
// the raw one, for decisionErr, but for ErrNotSent and *UncertainError, which are final.
func (s *Store) run(ctx context.Context, sc *redis.Script, key string, keys []string, args []interface{}) (interface{}, error) {
	if c := s.co; c != nil {
		if call := c.enqueue(ctx, s, sc, key, keys, args); call != nil {
			return c.wait(ctx, call)
		}
		defer c.release(s) // a lane was free: this call holds it and goes out alone
	}
	// (A variable of its own: keys escapes through enqueue, one[:] must not.)
	one, ks := [1]string{key}, keys
	if ks == nil {
		ks = one[:]
	}
	return runOnce(ctx, s.rdb, sc, ks, args).Result()
}

// enqueue takes a free lane for the caller and returns nil, or queues the call when every
// lane is busy and returns it.
func (c *coalescer) enqueue(ctx context.Context, s *Store, sc *redis.Script, key string, keys []string, args []interface{}) *scriptCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active < c.lanes && len(c.queue) == 0 {
		c.active++
		return nil
	}
	call := callPool.Get().(*scriptCall)
	call.ctx, call.sc, call.keys, call.args = ctx, sc, keys, args
	if keys == nil {
		call.key1[0] = key
		call.keys = call.key1[:]
	}
	c.queue = append(c.queue, call)
	if c.active < c.lanes {
		c.active++
		go c.lane(s)
	}
	return call
}

// wait waits for a queued call's reply, or for the caller's context to end.
func (c *coalescer) wait(ctx context.Context, call *scriptCall) (interface{}, error) {
	select {
	case <-call.done:
		v, err := call.v, call.err
		*call = scriptCall{done: call.done}
		callPool.Put(call)
		return v, err
	case <-ctx.Done():
	}
	keys := strings.Join(call.keys, ",")
	c.mu.Lock()
	for i, q := range c.queue {
		if q == call {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			c.mu.Unlock()
			return nil, fmt.Errorf("%w for %s: %w", ErrNotSent, keys, ctx.Err())
		}
	}
	c.mu.Unlock()
	select {
	case <-call.done: // the reply came as the context ended: it is known, report it
		return call.v, call.err
	default:
	}
	// Already on its way: the lane still owns call (it is not pooled again) and the
	// server may apply the decision.
	return nil, &UncertainError{Key: keys, Err: ctx.Err()}
}

// release ends a direct call's hold on a lane: it hands the lane to the queue if one
// formed meanwhile.
func (c *coalescer) release(s *Store) {
	c.mu.Lock()
	if len(c.queue) > 0 {
		c.mu.Unlock()
		go c.lane(s)
		return
	}
	c.active--
	c.mu.Unlock()
}

// lane sends the queue, up to maxCoalesced decisions per round trip, until it is empty.
func (c *coalescer) lane(s *Store) {
	var batch []*scriptCall
	for {
		c.mu.Lock()
		n := min(len(c.queue), maxCoalesced)
		if n == 0 {
			c.active--
			c.mu.Unlock()
			return
		}
		batch = append(batch[:0], c.queue[:n]...)
		rest := copy(c.queue, c.queue[n:])
		clear(c.queue[rest:])
		c.queue = c.queue[:rest]
		c.mu.Unlock()

		s.sendQueued(batch)
		for _, call := range batch {
			call.done <- struct{}{}
		}
		clear(batch)
	}
}

// sendQueued sends the queued calls in one pipeline and sets each one's reply. On a client
// of one server (standalone or Sentinel), consecutive one-key Takes with the same options go
// as one EVALSHA of the native script over all their keys, a batch (token_bucket.lua): the
// server runs the script and reads TIME once for them all, and each decision is still made
// on its own, in order, atomically. A Cluster's keys in one call would have to share a
// slot, so there every decision keeps its own EVALSHA.
func (s *Store) sendQueued(calls []*scriptCall) {
	// The batch outlives any one caller's cancellation: once sent, every decision gets
	// its reply read, so the connection stays in step. The client's ReadTimeout and
	// WriteTimeout bound it, not any caller's context.
	ctx := context.WithoutCancel(calls[0].ctx)
	size := 0
	for _, call := range calls {
		size += 7 + len(call.keys) + len(call.args)
	}
	b := newBatch(len(calls), size)
	defer b.release()
	_, single := s.rdb.(*redis.Client)
	runs := make([]int, 0, len(calls)) // runs[i]: how many calls cmds[i] decides
	for i := 0; i < len(calls); {
		n := 1
		if single {
			n = mergeable(calls[i:])
		}
		if n == 1 {
			b.evalsha(ctx, calls[i].sc, calls[i].args, calls[i].keys...)
		} else {
			b.takes(ctx, calls[i:i+n])
		}
		runs = append(runs, n)
		i += n
	}
	cmds := b.cmds
	// A round trip that failed (a Cluster node gone mid-pipeline, say) fails only the
	// commands that got no reply: one another node answered was applied, and its reply
	// stands, or the caller would count an applied decision as not made.
	sendErr := s.sendBatch(ctx, cmds)
	i := 0
	for c, n := range runs {
		v, err := cmds[c].Result()
		if sendErr != nil && !answered(err) {
			err = sendErr
		}
		if n == 1 {
			calls[i].v, calls[i].err = v, err
			i++
			continue
		}
		for j := range n {
			calls[i+j].v, calls[i+j].err = batchReply(v, err, j, n)
		}
		i += n
	}
}

// answered reports whether a pipelined command's error is its server's reply (nil, or a
// reply error other than NOSCRIPT, whose command ran nothing and is sent again), rather
// than the failure of its round trip.
func answered(err error) bool {
	var re redis.Error
	return err == nil || (errors.As(err, &re) && !redis.HasErrorPrefix(err, "NOSCRIPT"))
}

// batchReply is decision j's reply out of a batch of n (token_bucket.lua): element j of
// the array v, its record or its error.
func batchReply(v interface{}, err error, j, n int) (interface{}, error) {
	if err != nil {
		return nil, err
	}
	a, _ := v.([]interface{})
	if len(a) != n {
		return nil, fmt.Errorf("unexpected batch reply: %v for %d decisions", v, n)
	}
	if e, refused := a[j].(error); refused {
		return nil, e
	}
	return a[j], nil
}

// mergeable is how many calls from the first on can go as one batch: one-key decisions of
// the native script with a spec of their own (a zero spec, read from the bucket, goes alone)
// whose shared options (ARGV[4] and on) are the same.
func mergeable(calls []*scriptCall) int {
	batchable := func(c *scriptCall) bool {
		return c.sc == nativeScript() && len(c.keys) == 1 && len(c.args) >= 2 && c.args[0] != "" && c.args[1] != ""
	}
	first := calls[0]
	if !batchable(first) {
		return 1
	}
	n := 1
	for n < len(calls) && batchable(calls[n]) && slices.Equal(options(calls[n].args), options(first.args)) {
		n++
	}
	return n
}

// options are the shared options of a native decision's ARGV (ARGV[4] on).
func options(args []interface{}) []interface{} { return args[min(3, len(args)):] }

// costArg is a native decision's cost argument (ARGV[3], absent when 1).
func costArg(args []interface{}) interface{} {
	if len(args) < 3 {
		return "1"
	}
	return args[2]
}

// takes adds one EVALSHA of the native script deciding calls in order: KEYS the calls'
// keys, ARGV the first call's seven (its capacity, rate and cost, then the shared options,
// "" where absent) followed by capacity, rate and cost of each further call.
func (b *batch) takes(ctx context.Context, calls []*scriptCall) {
	start := len(b.args)
	b.args = append(b.args, "evalsha", shaArgs()[nativeScript()], len(calls))
	for _, c := range calls {
		b.args = append(b.args, c.keys[0])
	}
	first := calls[0].args
	b.args = append(b.args, first[0], first[1], costArg(first))
	b.args = append(b.args, options(first)...)
	for range 4 - len(options(first)) {
		b.args = append(b.args, "")
	}
	for _, c := range calls[1:] {
		b.args = append(b.args, c.args[0], c.args[1], costArg(c.args))
	}
	b.cmds = append(b.cmds, redis.NewCmd(ctx, b.args[start:len(b.args):len(b.args)]...))
}
