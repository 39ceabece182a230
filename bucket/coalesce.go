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

// A decision that finds no free lane queues; the next free lane sends the queue as one pipeline.
const (
	maxCoalesced = 128
	defaultLanes = 1
)

// WithCoalescing sets how many round trips decisions may have in flight (0: no coalescing).
func WithCoalescing(lanes int) Option {
	return func(s *Store) {
		s.co = nil
		if lanes > 0 {
			s.co = &coalescer{lanes: lanes}
		}
	}
}

// Direct returns a Store like s whose decisions are never coalesced.
func (s *Store) Direct() *Store {
	return &Store{rdb: s.rdb, now: s.now, grace: s.grace}
}

type coalescer struct {
	mu     sync.Mutex
	queue  []*scriptCall
	active int // direct calls and lane goroutines in flight
	lanes  int
}

// scriptCall is one queued decision; done receives once v and err are set.
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

// run runs a writing script once on keys (nil: key alone), coalesced when the Store does.
func (s *Store) run(ctx context.Context, sc *redis.Script, key string, keys []string, args []interface{}) (interface{}, error) {
	if c := s.co; c != nil {
		if call := c.enqueue(ctx, s, sc, key, keys, args); call != nil {
			return c.wait(ctx, call)
		}
		defer c.release(s) // a lane was free: this call holds it and goes out alone
	}
	one, ks := [1]string{key}, keys // one must not escape through enqueue
	if ks == nil {
		ks = one[:]
	}
	// As redis.Script.Run does (EVALSHA, then EVAL on NOSCRIPT), each command sent at most once.
	call := [1]*redis.Cmd{evalCmd(ctx, "evalsha", shaArgs()[sc], ks, args)}
	_, _ = sendCalls(ctx, s.rdb, call[:], nil, callRW, takeRetry)
	return call[0].Result()
}

// enqueue takes a free lane and returns nil, or queues the call and returns it.
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
	return nil, &UncertainError{Key: keys, Err: ctx.Err()} // sent: the lane owns call
}

// release ends a direct call's hold on a lane, handing it to a queue formed meanwhile.
func (c *coalescer) release(s *Store) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) > 0 {
		go c.lane(s)
		return
	}
	c.active--
}

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

// sendQueued sends the queued calls in one pipeline, mergeable Takes as one EVALSHA.
func (s *Store) sendQueued(calls []*scriptCall) {
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
	sendErr := s.sendBatch(ctx, cmds) // fails only the commands that got no reply
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

// answered reports whether a pipelined command got its server's reply (NOSCRIPT aside).
func answered(err error) bool {
	var re redis.Error
	return err == nil || (errors.As(err, &re) && !redis.HasErrorPrefix(err, "NOSCRIPT"))
}

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

// mergeable is how many calls from the first on are native decisions with the same options.
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

func options(args []interface{}) []interface{} { return args[min(3, len(args)):] }

func costArg(args []interface{}) interface{} {
	if len(args) < 3 {
		return "1"
	}
	return args[2]
}

// takes adds one native EVALSHA deciding calls in order.
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
