package bucket_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// appWriter stores buckets exactly as one application does: its own Lua script, its own
// arguments and clock. decide takes one token (the apps all take 1) and reports allowed.
type appWriter struct {
	layout string
	script *redis.Script
	// args builds the application's KEYS and ARGV for capacity, rate and its clock's now.
	args func(key string, capacity, rate float64, now time.Time) ([]string, []any)
	// clientClock says the application passes its own time (else it uses Redis TIME).
	clientClock bool
}

func (w appWriter) decide(t *testing.T, c *redis.Client, key string, capacity, rate float64, now time.Time) bool {
	t.Helper()
	keys, args := w.args(key, capacity, rate, now)
	v, err := w.script.Run(context.Background(), c, keys, args...).Result()
	if err != nil && err != redis.Nil {
		t.Fatalf("%s app script: %v", w.layout, err)
	}
	switch r := v.(type) {
	case int64:
		return r == 1
	case []any:
		return r[0].(int64) == 1
	case nil:
		return false // Spring's script returns false (nil) on deny
	}
	t.Fatalf("%s app script replied %T %v", w.layout, v, v)
	return false
}

func secs(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', 6, 64) }

var apps = []appWriter{
	{layout: "webman", clientClock: true, script: redis.NewScript(`
local key = KEYS[1]
local lastTimeKey = KEYS[2]
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = 1
local currentTokens = tonumber(redis.call('GET', key))
if currentTokens == nil then currentTokens = capacity end
local lastRefillTime = tonumber(redis.call('GET', lastTimeKey))
if lastRefillTime == nil then lastRefillTime = now end
local timePassed = now - lastRefillTime
local tokensToAdd = timePassed * rate
local newTokenCount = math.min(capacity, currentTokens + tokensToAdd)
if newTokenCount < requested then return 0 end
newTokenCount = newTokenCount - requested
redis.call('SET', key, newTokenCount)
redis.call('SET', lastTimeKey, now)
return 1`),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k, k + ":last_time"}, []any{c, r, secs(now)}
		}},
	{layout: "go-bench", clientClock: true, script: redis.NewScript(`
local key = KEYS[1]
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local tokens = redis.call("HGET", key, "tokens")
local ts = redis.call("HGET", key, "ts")
if tokens == false or ts == false then
tokens = burst
ts = now
else
tokens = tonumber(tokens)
ts = tonumber(ts)
end
local delta = math.max(0, now - ts)
local refill = (delta / 1000.0) * rate
tokens = math.min(burst, tokens + refill)
ts = math.max(now, ts)
local allowed = 0
local retry_after_ms = 0
if tokens >= cost then
tokens = tokens - cost
allowed = 1
else
local need = cost - tokens
retry_after_ms = math.ceil((need / rate) * 1000.0)
end
redis.call("HSET", key, "tokens", tokens)
redis.call("HSET", key, "ts", ts)
if ttl ~= nil and ttl > 0 then
redis.call("PEXPIRE", key, ttl)
end
return {allowed, retry_after_ms}`),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{now.UnixMilli(), r, c, 1, 600000}
		}},
	{layout: "spring", script: redis.NewScript(`
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])
local time_info = redis.call('TIME')
local now = tonumber(time_info[1])
local info = redis.call('HMGET', key, 'tokens', 'last_refill_time')
local current_tokens = tonumber(info[1])
local last_refill_time = tonumber(info[2])
if current_tokens == nil then
current_tokens = capacity
last_refill_time = now
end
if now > last_refill_time then
local delta = now - last_refill_time
local filled = delta * rate
current_tokens = math.min(capacity, current_tokens + filled)
last_refill_time = now
end
local allowed = false
if current_tokens >= requested then
current_tokens = current_tokens - requested
allowed = true
end
redis.call('HMSET', key, 'tokens', current_tokens, 'last_refill_time', last_refill_time)
redis.call('EXPIRE', key, math.ceil(capacity/rate) + 60)
return allowed`),
		args: func(k string, c, r float64, _ time.Time) ([]string, []any) {
			return []string{k}, []any{c, r, 1}
		}},
	{layout: "multi-tier", clientClock: true, script: redis.NewScript(`
local key          = KEYS[1]
local rate         = tonumber(ARGV[1])
local burst        = tonumber(ARGV[2])
local now          = tonumber(ARGV[3])
local consume      = tonumber(ARGV[4])
local data = redis.call('HMGET', key, 'tokens', 'last_refill_at')
local tokens        = tonumber(data[1])
local last_refill   = tonumber(data[2])
if tokens == nil then
    tokens      = burst
    last_refill = now
end
local elapsed = math.max(0, now - last_refill)
tokens = math.min(burst, tokens + elapsed * rate)
local allowed = 0
local retry_after_ms = 0
if tokens >= consume then
    tokens  = tokens - consume
    allowed = 1
else
    local deficit = consume - tokens
    retry_after_ms = math.ceil((deficit / rate) * 1000)
end
local ttl = math.ceil(burst / rate * 2)
redis.call('HMSET', key,
    'tokens',        tokens,
    'last_refill_at', now)
redis.call('EXPIRE', key, ttl)
return {allowed, tokens * 1000, retry_after_ms}`),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{r, c, secs(now), 1}
		}},
	{layout: "express", clientClock: true, script: redis.NewScript(`
local capacity = tonumber(ARGV[1])
local refill_rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local data = redis.call('HMGET', KEYS[1], 'tokens', 'last_refill')
local tokens = tonumber(data[1]) or capacity
local last_refill = tonumber(data[2]) or now
local elapsed = math.max(0, now - last_refill)
tokens = math.min(capacity, tokens + elapsed * refill_rate)
local allowed = 0
local retry_after = 0
if tokens >= cost then
tokens = tokens - cost
allowed = 1
else
retry_after = (cost - tokens) / refill_rate
end
redis.call('HMSET', KEYS[1], 'tokens', tokens, 'last_refill', now)
redis.call('EXPIRE', KEYS[1], math.ceil(2 * capacity / refill_rate))
return { allowed, tokens, retry_after }`),
		args: func(k string, c, r float64, now time.Time) ([]string, []any) {
			return []string{k}, []any{c, r, secs(now), 1}
		}},
}

func serverNow(t *testing.T, c *redis.Client) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

// TestForeignLayouts: buckets written by each application's own algorithm are inspected
// with the right level (refilled to now, within 1%), detected without a rule, and after a
// reset the application's next decisions see a full bucket, or exactly N tokens.
func TestForeignLayouts(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := context.Background()
	const capacity, rate = 20.0, 2.0
	sp := bucket.Spec{Capacity: capacity, Rate: rate}
	for _, app := range apps {
		t.Run(app.layout, func(t *testing.T) {
			key := "app:" + app.layout
			layout := bucket.Presets[app.layout]
			// 12 decisions now (from full): 8 tokens left at the app's time.
			start := serverNow(t, c)
			if app.clientClock {
				start = start.Add(-3 * time.Second) // the app's clock: 3 s ago
			}
			for i := 0; i < 12; i++ {
				if !app.decide(t, c, key, capacity, rate, start) {
					t.Fatalf("decision %d denied", i+1)
				}
			}
			// Expected level from the application's own stored time, refilled to the server's now.
			states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &layout, Spec: sp} })
			if err != nil {
				t.Fatal(err)
			}
			s := states[0]
			if s.Problem != "" || !s.Exists || s.Layout.Name != app.layout {
				t.Fatalf("state %+v", s)
			}
			// The application refills at its own time resolution (whole seconds for Spring),
			// so its stored level is 8 plus whole refills, and so is what it sees next.
			stored := s.Stored.Tokens
			if extra := (stored - 8) / rate; stored < 8 || (app.layout != "spring" && stored != 8) || extra != math.Trunc(extra) {
				t.Fatalf("stored tokens %v, want 8 (Spring: 8 + whole seconds × rate)", stored)
			}
			elapsed := float64(layout.Quantize(s.Now)-s.Stored.TS) / 1e6
			want := math.Min(capacity, stored+elapsed*rate)
			if math.Abs(s.Tokens-want) > 0.01*want {
				t.Fatalf("tokens %v (stored %v), want %v (+ %.3fs × %v)", s.Tokens, stored, want, elapsed, rate)
			}
			if app.clientClock && (elapsed < 2.9 || elapsed > 10) {
				t.Fatalf("stored time read as %.3fs ago, want about 3s: wrong time unit", elapsed)
			}

			// Detection without a rule names the layout.
			det, err := st.Inspect(ctx, []string{key}, nil)
			if err != nil || det[0].Layout.Name != app.layout || !det[0].Detected {
				t.Fatalf("detected %+v %v", det[0], err)
			}

			// Reset to exactly 5 tokens, in the layout's own units: the app's next decisions
			// see 5 (a tiny rate keeps refill out of the count).
			if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Tokens: 5}); err != nil {
				t.Fatal(err)
			}
			got := 0
			now := serverNow(t, c)
			for i := 0; i < 8; i++ {
				if app.decide(t, c, key, capacity, 0.0001, now) {
					got++
				}
			}
			if got != 5 {
				t.Fatalf("after reset to 5 the app allowed %d", got)
			}

			// Reset (delete): the app sees a full bucket: capacity decisions allowed.
			if _, err := st.Reset(ctx, key, layout, sp, bucket.ResetTo{Delete: true}); err != nil {
				t.Fatal(err)
			}
			for _, k := range layout.Keys(key) {
				if c.Exists(ctx, k).Val() != 0 {
					t.Fatalf("%s left after reset", k)
				}
			}
			got = 0
			now = serverNow(t, c)
			for i := 0; i < int(capacity)+2; i++ {
				if app.decide(t, c, key, capacity, 0.0001, now) {
					got++
				}
			}
			if got != int(capacity) {
				t.Fatalf("after reset the app allowed %d, want a full bucket's %v", got, capacity)
			}
		})
	}
}

// TestNotABucketNeverChanged: keys of other types, or hashes of no known layout, are
// reported as such and refused by reset.
func TestNotABucketNeverChanged(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := context.Background()
	c.RPush(ctx, "alist", "a", "b")
	c.HSet(ctx, "profile", "name", "ann", "age", "40")
	c.Set(ctx, "plain", "hello", 0)
	states, err := st.Inspect(ctx, []string{"alist", "profile", "plain"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Problem == "" {
			t.Errorf("%s: no problem reported: %+v", s.Key, s)
		}
	}
	before := map[string]string{}
	for _, k := range []string{"alist", "profile", "plain"} {
		before[k] = dump(t, c, k)
	}
	for _, k := range []string{"alist", "profile", "plain"} {
		for _, to := range []bucket.ResetTo{{Delete: true}, {Tokens: 3}} {
			layout := bucket.NativeLayout
			if k == "plain" {
				layout = bucket.Presets["express"]
			}
			if k == "alist" && to.Delete {
				layout = bucket.Presets["webman"]
			}
			if _, err := st.Reset(ctx, k, layout, bucket.Spec{}, to); err == nil && k != "profile" {
				t.Errorf("reset of %s (%s) succeeded", k, layout.Name)
			}
		}
	}
	for k, v := range before {
		if k == "profile" {
			continue
		}
		if dump(t, c, k) != v {
			t.Errorf("%s changed", k)
		}
	}
}

func seedBuckets(t testing.TB, c *redis.Client, n int) {
	ctx := context.Background()
	pipe := c.Pipeline()
	for i := 0; i < n; i++ {
		pipe.HSet(ctx, fmt.Sprintf("many:%05d", i), "tokens", "3", "last_refill", "1700000000.5")
		if i%1000 == 999 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// inspectAll is what `inspect --match` and `list` do: SCAN pages, one pipelined read each.
func inspectAll(ctx context.Context, st *bucket.Store, pattern string) (int, error) {
	n := 0
	err := st.Scan(ctx, pattern, 500, nil, func(keys []string) error {
		states, err := st.Inspect(ctx, keys, nil)
		n += len(states)
		return err
	})
	return n, err
}

// TestInspectManyRoundTrips: 10,000 buckets matched by a pattern are read in SCAN pages plus
// one pipelined round trip per page.
func TestInspectManyRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	seedBuckets(t, c, 10000)
	rt := &redistest.Counter{}
	c.AddHook(rt)
	st := bucket.NewStore(c)
	n, err := inspectAll(context.Background(), st, "many:*")
	if err != nil || n != 10000 {
		t.Fatalf("inspected %d: %v", n, err)
	}
	// SCAN with COUNT 500 over 10,000 keys: about 20 pages (Redis may return a few more),
	// each one SCAN and one pipeline.
	if calls := rt.RoundTrips.Load(); calls < 40 || calls > 2*30 {
		t.Fatalf("%d round trips for 10,000 buckets, want 2 per SCAN page (about 40)", calls)
	}
}

// BenchmarkInspectMatch10k: SCAN + pipelined inspect of 10,000 buckets; reports round trips
// and commands per full pass.
func BenchmarkInspectMatch10k(b *testing.B) {
	srv := redistest.Start(b)
	c := srv.Client(b)
	seedBuckets(b, c, 10000)
	rt := &redistest.Counter{}
	c.AddHook(rt)
	st := bucket.NewStore(c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := inspectAll(context.Background(), st, "many:*"); err != nil || n != 10000 {
			b.Fatalf("%d %v", n, err)
		}
	}
	b.ReportMetric(float64(rt.RoundTrips.Load())/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(rt.Commands.Load())/float64(b.N), "commands/op")
}
