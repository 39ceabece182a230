package bucket

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// lazyScript is scripts.Lazy of a source known at start-up.
func lazyScript(src string) func() *redis.Script {
	return scripts.Lazy(func() string { return src })
}

var nativeScript = scripts.Lazy(scripts.TokenBucket)

// runOnce runs a writing script as redis.Script.Run does (EVALSHA, then EVAL on NOSCRIPT),
// each command sent at most once, even by a ClusterClient's own retry loop (help design).
func runOnce(ctx context.Context, c Client, sc *redis.Script, keys []string, args []interface{}) *redis.Cmd {
	cmd := evalCmd(ctx, "evalsha", sc.Hash(), keys, args)
	_ = c.Process(ctx, noResend{cmd})
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = evalCmd(ctx, "eval", scripts.BySHA()[sc.Hash()].Src, keys, args)
		_ = c.Process(ctx, noResend{cmd})
	}
	return cmd
}

func evalCmd(ctx context.Context, name, script string, keys []string, args []interface{}) *redis.Cmd {
	a := make([]interface{}, 3+len(keys), 3+len(keys)+len(args))
	a[0], a[1], a[2] = name, script, len(keys)
	for i, k := range keys {
		a[3+i] = k
	}
	return redis.NewCmd(ctx, append(a, args...)...)
}

// noResend marks a command go-redis must not re-send, in pipelines too.
type noResend struct{ *redis.Cmd }

// NoRetry tells go-redis not to re-send the command.
func (noResend) NoRetry() bool { return true }

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
