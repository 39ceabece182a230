package bucket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

var nativeScript = scripts.Lazy(scripts.TokenBucket)

// A script call's mode: EVALSHA_RO (zero, reads), EVALSHA (callRW), or with the source
// where SCRIPT LOAD is refused, EVAL_RO and EVAL (callEval).
const (
	callRW int32 = 1 << iota
	callEval
)

var callNames = [...]interface{}{"evalsha_ro", "evalsha", "eval_ro", "eval"}

// retry says how script calls recover from NOSCRIPT: the script loaded and the calls sent
// again (a refused load: as EVAL, or the error when mustLoad), or as EVAL at once (!load).
// tries bounds the sends; once: go-redis never re-sends a call itself (help design).
type retry struct {
	tries                int
	load, mustLoad, once bool
}

var (
	takeRetry  = retry{tries: 2, once: true}
	batchRetry = retry{tries: 2, load: true, mustLoad: true, once: true}
	resetRetry = retry{tries: 3, load: true}
	readRetry  = retry{tries: 4, load: true}
)

// sendCalls sends calls, pre (the read's TIME) first, then again those answered NOSCRIPT or
// "unknown command" to _RO (before Redis 7), as r says. It returns the mode last sent and
// the error of a send that failed as a whole; reply errors stay the calls' own.
func sendCalls(ctx context.Context, c Client, calls []*redis.Cmd, pre redis.Cmder, mode int32, r retry) (int32, error) {
	var loads []*redis.StringCmd
	for try := 1; ; try++ {
		if err := send(ctx, c, calls, pre, loads, r.once); err != nil {
			return mode, err
		}
		for _, l := range loads {
			if err := l.Err(); err != nil && r.mustLoad {
				return mode, fmt.Errorf("loading the script after NOSCRIPT: %w", err)
			} else if err != nil {
				mode |= callEval
			}
		}
		var again []*redis.Cmd
		var load []string // SHAs
		for _, call := range calls {
			err := call.Err()
			switch {
			case err == nil:
				continue
			case redis.HasErrorPrefix(err, "NOSCRIPT") && r.load && mode&callEval == 0:
				if sha, _ := call.Args()[1].(string); !slices.Contains(load, sha) {
					load = append(load, sha)
				}
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				mode |= callEval
			case mode&callRW == 0 && isUnknownCommand(err):
				mode |= callRW
			default:
				continue
			}
			again = append(again, call)
		}
		if len(again) == 0 || try == r.tries {
			return mode, nil
		}
		loads = nil
		for _, sha := range load {
			src := scripts.BySHA()[sha].Src
			if _, lone := c.(*redis.Client); lone {
				loads = append(loads, redis.NewStringCmd(ctx, "script", "load", src))
			} else {
				loads = append(loads, c.ScriptLoad(ctx, src)) // on every master
			}
		}
		for _, call := range again {
			a := call.Args()
			a[0] = callNames[mode]
			sha, _ := a[1].(string)
			if sc, ok := scripts.BySHA()[sha]; ok && mode&callEval != 0 {
				a[1] = sc.Src
			}
			call.SetErr(nil)
		}
		if pre != nil {
			pre.SetErr(nil)
		}
		calls = again
	}
}

// send sends calls once, after loads and pre; a lone call goes without a pipeline.
func send(ctx context.Context, c Client, calls []*redis.Cmd, pre redis.Cmder, loads []*redis.StringCmd, once bool) error {
	wrap := func(call *redis.Cmd) redis.Cmder {
		if once {
			return noResend{call}
		}
		return call
	}
	var err error
	if len(calls) == 1 && pre == nil && loads == nil {
		err = c.Process(ctx, wrap(calls[0]))
	} else {
		pipe := c.Pipeline()
		for _, l := range loads {
			_ = pipe.Process(ctx, l)
		}
		if pre != nil {
			_ = pipe.Process(ctx, pre)
		}
		for _, call := range calls {
			_ = pipe.Process(ctx, wrap(call))
		}
		_, err = pipe.Exec(ctx)
	}
	var re redis.Error
	if err == nil || errors.As(err, &re) {
		return nil // a server's reply is the calls' own error
	}
	return err
}

func evalCmd(ctx context.Context, name, script interface{}, keys []string, args []interface{}) *redis.Cmd {
	a := make([]interface{}, 3+len(keys), 3+len(keys)+len(args))
	a[0], a[1], a[2] = name, script, len(keys)
	for i, k := range keys {
		a[3+i] = k
	}
	return redis.NewCmd(ctx, append(a, args...)...)
}

// noResend marks a command go-redis must not re-send, in pipelines too.
type noResend struct{ *redis.Cmd }

func (noResend) NoRetry() bool { return true }

// recordLen is token_bucket.lua's reply: allowed, tokens, ts and the counters as stored
// ('<BddI7I7'); capacity and rate ('dd') follow when the spec came from the bucket.
const recordLen = offCapacity - offLast

// nativeResult reads token_bucket.lua's reply for a decision of cost with spec (zero: the
// reply's). Retry-after and reset-after take the script's own IEEE operations.
func nativeResult(v interface{}, spec Spec, cost float64) (Result, error) {
	s, _ := v.(string)
	if len(s) != recordLen && len(s) != recordLen+16 {
		return Result{}, fmt.Errorf("unexpected script reply %q", v)
	}
	if len(s) > recordLen {
		spec = Spec{Capacity: float64At(s, recordLen), Rate: float64At(s, recordLen+8)}
	}
	tokens := float64At(s, offTokens-offLast)
	r := Result{Allowed: s[0] == 1, Spec: spec, Remaining: tokens, At: time.UnixMicro(int64(float64At(s, offTS-offLast)))}
	switch {
	case cost > spec.Capacity:
		r.RetryAfter = -1
	case tokens < cost:
		r.RetryAfter = time.Duration(math.Ceil(((cost-tokens)/spec.Rate)*1e6)) * time.Microsecond
	}
	r.ResetAfter = time.Duration(math.Ceil(((spec.Capacity-tokens)/spec.Rate)*1e6)) * time.Microsecond
	return r, nil
}

// parseResult reads one tier of multi_bucket.lua's reply: allowed, remaining, retry-after
// and reset-after, then capacity and rate when they came from the bucket.
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
	var ok bool
	if r.Remaining, ok = ParseNumber(rem); !ok {
		return Result{}, fmt.Errorf("unexpected tokens %q in script reply", rem)
	}
	if len(v) >= 6 {
		c, _ := v[4].(string)
		rt, _ := v[5].(string)
		var okC, okR bool
		r.Spec.Capacity, okC = ParseNumber(c)
		r.Spec.Rate, okR = ParseNumber(rt)
		if !okC || !okR {
			return Result{}, fmt.Errorf("unexpected spec %q, %q in script reply", c, rt)
		}
	}
	return r, nil
}
