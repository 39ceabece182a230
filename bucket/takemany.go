package bucket

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"
)

// BatchError reports a TakeMany's failed decisions: Errs[i] is keys[i]'s, nil when it held.
type BatchError struct {
	Errs []error
}

func (e *BatchError) Error() string {
	failed := append(e.Unwrap(), nil) // nil: the first when none failed
	if len(failed) == 2 {
		return failed[0].Error()
	}
	return fmt.Sprintf("%d of %d decisions failed, the first: %v", len(failed)-1, len(e.Errs), failed[0])
}

// Unwrap returns the decisions' errors.
func (e *BatchError) Unwrap() []error {
	var errs []error
	for _, err := range e.Errs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// batch is the pooled scratch space of one pipeline of EVALSHAs.
type batch struct {
	cmds []*redis.Cmd
	args []interface{}
	errs []error
}

var batchPool = sync.Pool{New: func() any { return new(batch) }}

func newBatch(n, size int) *batch {
	b := batchPool.Get().(*batch)
	if cap(b.cmds) < n {
		b.cmds = make([]*redis.Cmd, 0, n)
	}
	if cap(b.args) < size {
		b.args = make([]interface{}, 0, size)
	}
	return b
}

// shaArgs holds each writing script's SHA boxed once, for command arguments.
var shaArgs = sync.OnceValue(func() map[*redis.Script]interface{} {
	return map[*redis.Script]interface{}{nativeScript(): nativeScript().Hash(), multiScript(): multiScript().Hash()}
})

// evalsha adds an EVALSHA, its arguments in the batch's one array.
func (b *batch) evalsha(ctx context.Context, sc *redis.Script, args []interface{}, keys ...string) {
	start := len(b.args)
	b.args = append(b.args, "evalsha", shaArgs()[sc], len(keys))
	for _, k := range keys {
		b.args = append(b.args, k)
	}
	b.args = append(b.args, args...)
	b.cmds = append(b.cmds, redis.NewCmd(ctx, b.args[start:len(b.args):len(b.args)]...))
}

func (b *batch) release() {
	clear(b.cmds)
	clear(b.args)
	clear(b.errs)
	b.cmds, b.args, b.errs = b.cmds[:0], b.args[:0], b.errs[:0]
	batchPool.Put(b)
}

// TakeMany makes one Take per key (keys may repeat) in one pipelined round trip into out;
// failed decisions make a *BatchError. Only NOSCRIPT replies are re-sent.
func (s *Store) TakeMany(ctx context.Context, keys []string, spec Spec, cost float64, out []Result) error {
	if len(out) < len(keys) {
		return fmt.Errorf("%w: %d results for %d keys", ErrInvalid, len(out), len(keys))
	}
	if len(keys) == 0 {
		return nil
	}
	if slices.Contains(keys, "") {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if err := s.check(keys[0], spec, cost); err != nil {
		return err
	}
	argv := s.argv(spec, cost, false)
	b := newBatch(len(keys), (4+len(argv))*len(keys))
	defer b.release()
	for _, k := range keys {
		b.evalsha(ctx, nativeScript(), argv, k)
	}
	cmds := b.cmds
	if err := s.sendBatch(ctx, cmds); err != nil {
		return err
	}

	failed := false
	b.errs = slices.Grow(b.errs[:0], len(keys))[:len(keys)]
	errs := b.errs
	for i, c := range cmds {
		v, err := c.Result()
		if err == nil {
			out[i], err = nativeResult(v, spec, cost)
		} else {
			err = scriptErr(keys[i], err)
		}
		errs[i] = err
		failed = failed || err != nil
	}
	if failed {
		return &BatchError{Errs: append([]error(nil), errs...)}
	}
	return nil
}

// sendBatch sends cmds, calls of the writing scripts, in one pipeline (see sendCalls).
func (s *Store) sendBatch(ctx context.Context, cmds []*redis.Cmd) error {
	_, err := sendCalls(ctx, s.rdb, cmds, nil, callRW, batchRetry)
	if err != nil {
		s.networkErr(err)
	}
	return err
}
