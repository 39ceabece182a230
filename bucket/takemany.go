package bucket

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// BatchError reports the decisions of a TakeMany that failed. Errs[i] is the error of
// keys[i], nil when out[i] holds its decision.
type BatchError struct {
	Errs []error
}

func (e *BatchError) Error() string {
	n, first := 0, error(nil)
	for _, err := range e.Errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if n == 1 {
		return first.Error()
	}
	return fmt.Sprintf("%d of %d decisions failed, the first: %v", n, len(e.Errs), first)
}

// Unwrap returns the per-key errors, so errors.Is and errors.As see through the batch.
func (e *BatchError) Unwrap() []error {
	var errs []error
	for _, err := range e.Errs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// batch is the scratch space of one TakeMany call, pooled so a busy caller allocates little.
type batch struct {
	cmds []*redis.Cmd
	args []interface{}
	errs []error
}

var batchPool = sync.Pool{New: func() any { return new(batch) }}

// newBatch returns a pooled batch with room for n commands of size arguments in all.
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

// evalsha adds the command EVALSHA sha numkeys keys... args..., its arguments in the
// batch's one backing array.
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

// TakeMany makes one Take per key, all in one pipelined round trip (an EVALSHA each), and
// writes the decision for keys[i] to out[i]; out must hold len(keys) results. A key may
// repeat: its decisions apply in order, each atomically. The spec and cost are the same
// for every key.
//
// Commands that answer NOSCRIPT did not run, so TakeMany loads the script and re-sends
// those, and only those. It never re-sends after a timeout or a connection error: a
// decision the server may have applied must never be applied twice. When some decisions
// fail, it returns a *BatchError saying which; the others are in out.
func (s *Store) TakeMany(ctx context.Context, keys []string, spec Spec, cost float64, out []Result) error {
	if len(out) < len(keys) {
		return fmt.Errorf("%w: %d results for %d keys", ErrInvalid, len(out), len(keys))
	}
	if len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		if k == "" {
			return fmt.Errorf("%w: empty key", ErrInvalid)
		}
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
	b.errs = grow(b.errs, len(keys))
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

// sendBatch sends cmds in one pipeline. Commands that answer NOSCRIPT did not run: it
// loads the script and re-sends those alone, replacing them in cmds. An error that failed
// a round trip itself is returned; reply errors stay on their commands.
func (s *Store) sendBatch(ctx context.Context, cmds []*redis.Cmd) error {
	if err := s.execBatch(ctx, cmds); err != nil {
		return err
	}
	var again []*redis.Cmd
	for _, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			again = append(again, c)
		}
	}
	if len(again) == 0 {
		return nil
	}
	loaded := map[string]bool{}
	for _, c := range again {
		sha, _ := c.Args()[1].(string)
		if sc, ok := scripts.BySHA()[sha]; ok && !loaded[sha] {
			if err := s.rdb.ScriptLoad(ctx, sc.Src).Err(); err != nil {
				return fmt.Errorf("loading the script after NOSCRIPT: %w", err)
			}
			loaded[sha] = true
		}
	}
	for i, c := range again {
		again[i] = redis.NewCmd(ctx, c.Args()...)
	}
	if err := s.execBatch(ctx, again); err != nil {
		return err
	}
	j := 0
	for i, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			cmds[i] = again[j]
			j++
		}
	}
	return nil
}

// execBatch sends cmds in one pipeline. Reply errors stay on their commands; an error that
// failed the round trip itself is returned.
func (s *Store) execBatch(ctx context.Context, cmds []*redis.Cmd) error {
	pipe := s.rdb.Pipeline()
	for _, c := range cmds {
		// At most once, as Take: a Cluster pipeline holding a NoRetry command is not
		// re-sent after a network error (MOVED/ASK redirects are still followed).
		_ = pipe.Process(ctx, noResend{c})
	}
	_, err := pipe.Exec(ctx)
	if err == nil {
		return nil
	}
	s.networkErr(err)
	var re redis.Error
	if errors.As(err, &re) {
		// The first reply error of a command: each command carries its own.
		return nil
	}
	return err
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
