package bucket

import (
	"context"
	"fmt"
	"math"
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
	sha, ok := shaArgs()[sc] // boxed once
	if !ok {
		sha = sc.Hash()
	}
	cmd := evalCmd(ctx, "evalsha", sha, keys, args)
	_ = c.Process(ctx, noResend{cmd})
	if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		cmd = evalCmd(ctx, "eval", scripts.BySHA()[sc.Hash()].Src, keys, args)
		_ = c.Process(ctx, noResend{cmd})
	}
	return cmd
}

func evalCmd(ctx context.Context, name string, script interface{}, keys []string, args []interface{}) *redis.Cmd {
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
