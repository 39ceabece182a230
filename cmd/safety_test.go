package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// plantLookalikes writes application keys that look like buckets in some way but are not:
// every Redis type, hashes with bucket fields plus others, numeric strings with and without
// a numeric companion, non-numeric values. It returns their names.
func plantLookalikes(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	str := func(k, v string) {
		if err := c.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	hash := func(k string, kv ...any) {
		if err := c.HSet(ctx, k, kv...).Err(); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	// Strings: numbers without a companion, companions without a number, non-numbers.
	str("app:counter:1", "42")
	str("app:counter:2", "3.5")
	str("rl:user:7", "5")
	str("app:job", "queued")
	str("app:job:last_time", "1700000000")
	str("app:job2", "7")
	str("app:job2:last_time", "yesterday")
	str("app:hex", "0x10")
	str("app:hex:last_time", "1700000000")
	str("app:inf", "inf")
	str("app:inf:last_time", "1700000000")
	str("app:neg", "-5") // a bucket's shape with a corrupt value: still never touched
	str("app:neg:last_time", "1700000000")
	str("app:orphan:last_time", "1700000000.5")
	str("app:flag", "hello")
	str("app:big", strings.Repeat("9", 10000))
	str("app:json", `{"tokens":5,"ts":1}`)
	str("app:ctl\x1b]52;c;aGk=\x07", "1")
	str("app:huge", "1e400")
	str("app:huge:last_time", "1700000000")
	// Hashes: bucket fields plus others, partial fields, non-numeric or odd values.
	hash("app:user:2", "tokens", "5", "ts", "1700000000000", "email", "a@x", "password_hash", "h")
	hash("app:user:3", "tokens", "5", "last_refill", "1700000000.5", "name", "x")
	hash("app:user:4", "tokens", "5", "last_refill_time", "1700000000", "plan", "pro")
	hash("app:user:5", "tokens", "5", "last_refill_at", "1700000000.5", "role", "admin")
	hash("app:user:6", "tokens", "5", "ts", "1", "capacity", "10", "rate", "1", "owner", "bob")
	hash("app:user:7", "tokens", "five", "ts", "1700000000000")
	hash("app:user:8", "tokens", "5")
	hash("app:user:9", "ts", "1700000000000")
	hash("app:user:10", "tokens", "5", "ts", "0x10")
	hash("app:user:11", "tokens", "1e400", "ts", "1700000000000")
	hash("app:user:12", "tokens", "nan", "last_refill", "1")
	hash("app:user:13", "tokens", "5", "ts", "1", "capacity", "10", "rate", "1", "allowed", "1", "denied", "x")
	hash("app:user:14", "tokens", "5 ", "ts", "1")
	hash("app:user:15", "TOKENS", "5", "TS", "1")
	hash("app:user:16", "tokens", "", "ts", "")
	hash("app:user:17", "tokens", "5", "last_refill", "1", "last_refill_at", "2")
	hash("app:session:abc", "user_id", "42", "expires", "1700000000")
	big := []any{"tokens", "5", "ts", "1700000000000"}
	for i := 0; i < 100; i++ {
		big = append(big, fmt.Sprintf("f%d", i), "1")
	}
	hash("app:wide", big...)
	// Other types.
	for _, k := range []string{"app:queue", "rate:list"} {
		c.RPush(ctx, k, "tokens", "5")
		keys = append(keys, k)
	}
	c.SAdd(ctx, "app:set", "tokens", "ts")
	c.ZAdd(ctx, "app:zset", redis.Z{Score: 5, Member: "tokens"})
	c.XAdd(ctx, &redis.XAddArgs{Stream: "app:stream", Values: []any{"tokens", "5", "ts", "1"}})
	c.PFAdd(ctx, "app:hll", "a", "b")
	c.SetBit(ctx, "app:bits", 7, 1)
	c.GeoAdd(ctx, "app:geo", &redis.GeoLocation{Name: "x", Longitude: 1, Latitude: 1})
	keys = append(keys, "app:set", "app:zset", "app:stream", "app:hll", "app:bits", "app:geo")
	return keys
}

// plantBuckets writes real buckets of every layout, each by its application's own algorithm
// (bucketctl's script for the native one), and returns their keys (with time keys).
func plantBuckets(t *testing.T, c *redis.Client, url string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range apptest.Apps {
		for i := 0; i < 3; i++ {
			key := app.Key(fmt.Sprintf("bk:%s:%d", app.Layout, i))
			for j := 0; j <= i; j++ {
				// At 0.01/s: Upstash's TTL is the refill to full (1 s for a token at 1/s).
				if _, err := app.Decide(ctx, c, key, 10, 0.01, now); err != nil {
					t.Fatal(err)
				}
			}
			keys = append(keys, bucket.Presets[app.Layout].Keys(key)...)
		}
	}
	for i := 0; i < 3; i++ {
		key := fmt.Sprintf("bk:native:%d", i)
		if r := run(t, url, "consume", key, "--capacity", "10", "--rate", "1"); r.code != 0 {
			t.Fatalf("consume: %+v", r)
		}
		keys = append(keys, key)
	}
	return keys
}

// seedRules is a config file declaring the layout of each application's bk:LAYOUT:* buckets.
func seedRules() string {
	var b strings.Builder
	b.WriteString("rules:\n")
	for _, app := range apptest.Apps {
		fmt.Fprintf(&b, "  - {match: \"%s\", layout: %s}\n", app.Key("bk:"+app.Layout+":*"), app.Layout)
	}
	return b.String()
}

func dumps(t *testing.T, c *redis.Client, keys []string) map[string]string {
	m := map[string]string{}
	for _, k := range keys {
		m[k] = dumpKey(t, c, k)
	}
	return m
}

// TestResetTouchesOnlyBuckets: on a keyspace of application keys that look like buckets next
// to real buckets of every layout, reset --match '*' (with --tokens, then refilling: deleting,
// or writing a native bucket full) changes exactly the buckets; every other key's DUMP is
// unchanged.
func TestResetTouchesOnlyBuckets(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := "redis://" + srv.Addr()
	apps := plantLookalikes(t, c)
	if len(apps) < 40 {
		t.Fatalf("only %d lookalikes planted", len(apps))
	}
	buckets := plantBuckets(t, c, url)
	before := dumps(t, c, apps)
	bucketsBefore := dumps(t, c, buckets)

	// list shows exactly the buckets.
	r := run(t, url, "list", "--match", "*", "-o", "jsonl")
	if r.code != 0 {
		t.Fatalf("list: %+v", r)
	}
	all := 3*len(apptest.Apps) + 3
	if n := strings.Count(r.out, "\n"); n != all {
		t.Fatalf("list found %d buckets, want %d (3 of each application, 3 native):\n%s", n, all, r.out)
	}

	// With no layout declared, only bucketctl's own buckets are written.
	r = run(t, url, "reset", "--match", "*", "--tokens", "3", "--capacity", "10", "--rate", "1", "--yes", "-o", "jsonl")
	if r.code != 0 || !strings.Contains(r.errOut, "reset 3 bucket(s)") {
		t.Fatalf("reset --tokens with no rules: %+v", r)
	}
	for k, v := range dumps(t, c, buckets) {
		if native := strings.HasPrefix(k, "bk:native:"); (v == bucketsBefore[k]) == native {
			t.Errorf("reset --tokens with no rules: key %q changed %v, want %v", k, !native, native)
		}
	}
	bucketsBefore = dumps(t, c, buckets)

	writeConfig(t, seedRules())
	r = run(t, url, "reset", "--match", "*", "--tokens", "3", "--capacity", "10", "--rate", "1", "--yes", "-o", "jsonl")
	if r.code != 0 {
		t.Fatalf("reset --tokens: %+v", r)
	}
	for k, v := range dumps(t, c, apps) {
		if v != before[k] {
			t.Errorf("reset --tokens changed application key %q", k)
		}
	}
	for k, v := range dumps(t, c, buckets) {
		// A time key in whole seconds (Spring Cloud Gateway's) may be rewritten with the
		// second it held.
		if v == bucketsBefore[k] && !strings.HasPrefix(k, "bk:native:") && !strings.HasSuffix(k, ".timestamp") {
			t.Errorf("reset --tokens left bucket key %q as it was", k)
		}
	}
	if got := c.HGet(context.Background(), "bk:express:0", "tokens").Val(); got != "3" {
		t.Errorf("express bucket tokens %q after reset --tokens 3", got)
	}

	r = run(t, url, "reset", "--match", "*", "--yes")
	if r.code != 0 || !strings.Contains(r.errOut, fmt.Sprintf("reset %d bucket(s)", all)) {
		t.Fatalf("reset: %+v", r)
	}
	for k, v := range dumps(t, c, apps) {
		if v != before[k] {
			t.Errorf("reset changed application key %q", k)
		}
	}
	for _, k := range buckets {
		if strings.HasPrefix(k, "bk:native:") {
			assertFull(t, c, k) // written full, its spec kept
		} else if c.Exists(context.Background(), k).Val() != 0 {
			t.Errorf("bucket key %q left after reset", k)
		}
	}
	if strings.ContainsRune(r.errOut+r.out, 0x1b) {
		t.Errorf("a raw escape character reached the output: %q", r.errOut)
	}
}

// TestResetNamedLookalikesRefused: naming an application key, with or without --layout,
// refuses it (exit 1) and leaves it as it is.
func TestResetNamedLookalikesRefused(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := "redis://" + srv.Addr()
	apps := plantLookalikes(t, c)
	before := dumps(t, c, apps)
	for _, k := range apps {
		for _, extra := range [][]string{nil, {"--layout", "go-bench"}, {"--layout", "webman"}, {"--layout", "native", "--tokens", "1", "--capacity", "5", "--rate", "1"}} {
			args := append([]string{"reset", k, "--yes"}, extra...)
			r := run(t, url, args...)
			if r.code == 0 && !strings.Contains(r.errOut, "nothing to reset") {
				t.Errorf("reset %q %v: exit 0: %+v", k, extra, r)
			}
			if strings.ContainsRune(r.errOut, 0x1b) || strings.ContainsRune(r.errOut, 0x07) {
				t.Errorf("reset %q: raw control character on stderr: %q", k, r.errOut)
			}
		}
	}
	// consume runs the native script, which re-checks the whole hash too.
	for _, k := range apps {
		r := run(t, url, "consume", k, "--capacity", "10", "--rate", "1")
		if r.code == ExitOK || r.code == ExitDenied {
			t.Errorf("consume %q: exit %d: %+v", k, r.code, r)
		}
	}
	for k, v := range dumps(t, c, apps) {
		if v != before[k] {
			t.Errorf("application key %q changed", k)
		}
	}
}

// TestTopResetOfAReplacedBucket: top's reset key acts on a row read earlier; when the bucket
// became application data since, the reset is refused and the data kept.
func TestTopResetOfAReplacedBucket(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "top:b", "tokens", "3", "last_refill", "1700000000.5")
	st := bucket.NewStore(c)
	src := NewTopSource(st, TopParams{Match: "top:*"})
	snap, err := src.Fetch(ctx)
	if err != nil || len(snap.States) != 1 || snap.States[0].Problem != "" {
		t.Fatalf("fetch: %+v %v", snap, err)
	}
	c.HSet(ctx, "top:b", "email", "a@x")
	before := dumpKey(t, c, "top:b")
	if err := src.Reset(ctx, snap.States[0]); err == nil {
		t.Fatal("reset of a key that is no longer a bucket succeeded")
	}
	if dumpKey(t, c, "top:b") != before {
		t.Fatal("the application's hash changed")
	}
	_ = time.Second
}

// TestListFlagsClockSkew: list's NOTE column says when a bucket was written ahead of the
// server's clock.
func TestListFlagsClockSkew(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	c.HSet(ctx, "gb:fast", "tokens", "3", "ts", now.Add(5*time.Second).UnixMilli())
	c.HSet(ctx, "gb:ok", "tokens", "3", "ts", now.Add(-time.Second).UnixMilli())
	r := run(t, "redis://"+srv.Addr(), "list", "--match", "gb:*", "--capacity", "10", "--rate", "1")
	if r.code != 0 {
		t.Fatalf("list: %+v", r)
	}
	for _, l := range strings.Split(r.out, "\n") {
		switch {
		case strings.HasPrefix(l, "gb:fast") && !regexp.MustCompile(`  (4\.\d|5)s ahead of the server's clock \(client clock skew\?\)`).MatchString(l):
			t.Errorf("row of the bucket written 5 s ahead: %q", l)
		case strings.HasPrefix(l, "gb:ok") && strings.Contains(l, "ahead"):
			t.Errorf("row of a bucket on time: %q", l)
		}
	}
}

// TestWatchAndSpecBadInput: watch on a key that is not a bucket or on an empty key, and a
// spec that would need centuries to refill, are refused with one line and a non-zero exit,
// and nothing is written.
func TestWatchAndSpecBadInput(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	c.RPush(ctx, "lst", "a")
	url := "redis://" + srv.Addr()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"watch", "lst", "--count", "1"}, ExitError, "not a bucket: holds a list"},
		{[]string{"watch", "", "--count", "1"}, ExitUsage, "the key is empty"},
		{[]string{"consume", "k", "--capacity", "10", "--rate", "1e-320"}, ExitUsage, "longer than 100 years"},
		{[]string{"reset", "k", "--tokens", "1", "--capacity", "10", "--rate", "1e-12", "--yes"}, ExitUsage, "longer than 100 years"},
	} {
		r := run(t, url, tc.args...)
		if r.code != tc.code || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%q: exit %d %q, want exit %d and %q", tc.args, r.code, r.errOut, tc.code, tc.want)
			continue
		}
		oneLine(t, r)
	}
	if n := c.Exists(ctx, "k").Val(); n != 0 {
		t.Error("a refused command wrote k")
	}
}

// TestResetTokensWithAFastClient: after `reset --tokens 3` on buckets written by clients whose
// clocks run 5 s fast, each application, with its own fast clock, takes exactly what reset
// said (the refill is negligible at the rate used): 3 where the reset kept the stored, later
// time instead of writing the server's, which would hand the fast client 5 s of refill.
// Webman is the exception: it refills negatively from a time ahead of its clock, so a kept
// lead would leave every caller on the server's clock at 3 - 5 tokens; its reset writes the
// server's time (tokens_after 3 on that clock) and says the fast writer reads 3 + 5 s of
// refill (tokens_after_writer_clock), which the fast client then takes.
func TestResetTokensWithAFastClient(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	url := "redis://" + srv.Addr()
	const capacity, rate = 10.0, 1.0
	for _, app := range apptest.Apps {
		if !app.ClientClock {
			continue
		}
		t.Run(app.Layout, func(t *testing.T) {
			key := "fast:" + app.Layout
			now, err := c.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			fast := now.Add(5 * time.Second)
			for i := 0; i < 8; i++ { // drain to 2 at the fast clock's time
				if _, err := app.Decide(ctx, c, key, capacity, rate, fast); err != nil {
					t.Fatal(err)
				}
			}
			r := run(t, url, "reset", key, "--layout", app.Layout, "--capacity", "10", "--rate", "1", "--tokens", "3", "--yes", "-o", "json")
			var plan []output.ResetView
			if r.code != 0 || json.Unmarshal([]byte(r.out), &plan) != nil || len(plan) != 1 || plan[0].TokensAfter == nil {
				t.Fatalf("reset: %+v", r)
			}
			want, lo := 3, 3
			if w := plan[0].TokensAfterWriterClock; app.Layout == "webman" {
				if *plan[0].TokensAfter != 3 || w == nil || *w < 7.9 || *w > 8 || plan[0].AheadMS < 4900 {
					t.Fatalf("reset of a webman bucket 5 s ahead: %+v, want tokens_after 3 and about 8 on the writer's clock", plan[0])
				}
				// The 10 ms of refill below, less the ms between the read that computed w and
				// the write, whose time is the server's then.
				want, lo = int(*w+0.01*rate), int(*w-0.05*rate)
			} else if *plan[0].TokensAfter != 3 || w != nil {
				t.Fatalf("reset of a %s bucket 5 s ahead: %+v, want tokens_after 3 on every clock", app.Layout, plan[0])
			}
			if ttl := c.PTTL(ctx, key).Val(); ttl <= 0 {
				t.Fatalf("TTL %s after reset --tokens: the write must set one", ttl)
			}
			// The fast client decides again within a few ms of its last write.
			got := 0
			for i := 0; i < 10; i++ {
				ok, err := app.Decide(ctx, c, key, capacity, rate, fast.Add(10*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				if ok {
					got++
				}
			}
			if got < lo || got > want {
				t.Fatalf("after reset --tokens 3 the %s client with a fast clock took %d, want %d", app.Layout, got, want)
			}
		})
	}
}
