package apptest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Counter is one key a counter or window limiter wrote in its own form: the key, the name
// of the bucket.CounterForm it has, and its Redis type.
type Counter struct {
	Key, Form, Type string
}

// thirdParty reads a script of scripts/third_party (PATH under it), kept verbatim with its
// SOURCE; the tests alone run them.
func thirdParty(path string) (*redis.Script, error) {
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "scripts", "third_party", path))
	if err != nil {
		return nil, err
	}
	return redis.NewScript(string(b)), nil
}

// PlantCounters writes keys of every counter limiter bucketctl names, each with the
// limiter's own script where it has one (else the commands its source sends), at the
// server's time now, hits hits each.
func PlantCounters(ctx context.Context, c redis.UniversalClient, now time.Time, hits int) ([]Counter, error) {
	var out []Counter
	run := func(script, form, typ string, keys []string, args ...any) error {
		s, err := thirdParty(script)
		if err != nil {
			return err
		}
		for range hits {
			if err := s.Run(ctx, c, keys, args...).Err(); err != nil && err != redis.Nil {
				return fmt.Errorf("%s on %s: %w", script, keys[0], err)
			}
		}
		out = append(out, Counter{Key: keys[0], Form: form, Type: typ})
		return nil
	}
	const route, service = "0d1b2c3a-aaaa-4bbb-8ccc-000000000001", "00000000-0000-0000-0000-000000000000"
	minute := now.Truncate(time.Minute).UnixMilli() // kong/tools/timestamp.lua get_timestamps
	sec := now.Unix()
	steps := []func() error{
		// Kong: usage() with EXPIRATION[period] (policies/init.lua, expiration.lua).
		func() error {
			return run("kong-kong/usage.lua", "kong", "string",
				[]string{fmt.Sprintf("ratelimit:%s:%s:10.0.0.7:%d:minute", route, service, minute)}, 60)
		},
		// limits: FixedWindowRateLimiter.hit → incr(key_for(...), expiry, amount).
		func() error {
			return run("alisaifee-limits/incr_expire.lua", "limits", "string",
				[]string{"LIMITS:LIMITER/127.0.0.1/api/10/1/minute"}, 60, 1)
		},
		// limits: SlidingWindowCounterRateLimiter → acquire_sliding_window([previous, current], [limit, expiry, amount]).
		func() error {
			const cur = "LIMITS:{LIMITER/127.0.0.1/api/100/1/hour}"
			err := run("alisaifee-limits/acquire_sliding_window.lua", "limits-sliding", "string", []string{cur + "/-1", cur}, 100, 3600, 1)
			if err == nil {
				out[len(out)-1].Key = cur // the current window's counter (the previous one comes after a window)
			}
			return err
		},
		// limits: MovingWindowRateLimiter → acquire_moving_window([key], [timestamp, limit, expiry, amount]).
		func() error {
			return run("alisaifee-limits/acquire_moving_window.lua", "limits-moving", "list",
				[]string{"LIMITS:LIMITER/127.0.0.1/login/5/1/minute"}, strconv.FormatInt(sec, 10), 5, 60, 1)
		},
		// ulule/limiter: Increment → luaIncrScript(getCacheKey(key), count, period ms).
		func() error {
			return run("ulule-limiter/incr.lua", "ulule", "string", []string{"limiter:10.0.0.7"}, 1, 60000)
		},
		// rate-limiter-flexible: _upsert → rlflxIncr(rlKey, points, secDuration).
		func() error {
			return run("animir-node-rate-limiter-flexible/incr_ttl.lua", "rate-limiter-flexible", "string",
				[]string{"rlflx:user:42"}, 1, 60)
		},
		// go-zero: PeriodLimit.Take → periodscript(keyPrefix+key, [quota, period]).
		func() error {
			return run("zeromicro-go-zero/periodscript.lua", "go-zero", "string", []string{"periodlimit:sms:13800138000"}, 5, 86400)
		},
		// Laravel: RateLimiter::increment: add(KEY:timer, availableAt, decay), add(KEY, 0, decay), INCRBY KEY.
		func() error {
			const key = "laravel-database-laravel-cache-6f1ed002ab5595859014ebf0951522d9"
			if err := run("laravel-framework/add.lua", "laravel-timer", "string", []string{key + ":timer"}, sec+60, 60); err != nil {
				return err
			}
			if err := run("laravel-framework/add.lua", "laravel", "string", []string{key}, 0, 60); err != nil {
				return err
			}
			return c.IncrBy(ctx, key, int64(hits)).Err()
		},
		// envoy ratelimit: no script; a pipeline of INCRBY and EXPIRE of the unit (plus jitter)
		// on GenerateCacheKey's key (src/redis/fixed_cache_impl.go pipelineAppend).
		func() error {
			key := fmt.Sprintf("rl_remote_address_10.0.0.7_%d", sec-sec%60)
			pipe := c.Pipeline()
			for range hits {
				pipe.IncrBy(ctx, key, 1)
				pipe.Expire(ctx, key, 60*time.Second+17*time.Second)
			}
			_, err := pipe.Exec(ctx)
			out = append(out, Counter{Key: key, Form: "envoy", Type: "string"})
			return err
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return out, err
		}
	}
	return out, nil
}
