package cmd

// A rule or --layout naming a GCRA layout says what to expect; it does not make a plain
// number a bucket. redis_rate and throttled always set a TTL tied to the TAT, so under
// such a rule a counter, a flag or a timestamp (no TTL, or a TTL of its own) stays "not a
// bucket": hidden by list, refused by inspect, check and reset, and never written.

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

const gcraRules = `
rules:
  - {match: "rl:*", layout: redis-rate, capacity: 10, rate: 1}
  - {match: "tl:*", layout: throttled, capacity: 10, rate: 1}
  - {match: "rate:*", layout: redis-rate, capacity: 10, rate: 1}
  - {match: "throttle:*", layout: throttled, capacity: 10, rate: 1}
`

// plainKey is an application's string: its value and TTL (0: none).
type plainKey struct {
	value string
	ttl   time.Duration
}

// plantGCRALookalikes writes numbers of both libraries' forms that no library wrote.
func plantGCRALookalikes(t *testing.T, rdb *redis.Client) map[string]plainKey {
	t.Helper()
	ctx := context.Background()
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	since2017 := strconv.FormatFloat(float64(now.UnixMicro())/1e6-1483228800, 'f', 6, 64)
	ns := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixNano(), 10) }
	keys := map[string]plainKey{
		"rl:signups:total":   {value: "1500"},
		"rl:feature:enabled": {value: "1"},
		"rl:ver":             {value: "2.5"},
		"rl:now":             {value: since2017},                   // a redis_rate TAT of now, no TTL
		"rl:stamp":           {value: since2017, ttl: time.Hour},   // a TTL of its own, not the TAT's
		"rl:daily":           {value: "1500", ttl: 24 * time.Hour}, // a counter with a TTL
		"rate:hits":          {value: "42"},                        // the library's prefix, no TTL
		"tl:seen":            {value: ns(0)},                       // a throttled TAT of now, no TTL
		"tl:later":           {value: ns(time.Hour), ttl: 10 * time.Second},
		"tl:session":         {value: ns(0), ttl: 30 * time.Minute},
		"throttle:seen":      {value: ns(time.Second)},
	}
	for k, p := range keys {
		if err := rdb.Set(ctx, k, p.value, p.ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// checkPlainKeys fails unless every planted key holds its value byte for byte (DUMP), with
// no TTL where it had none and its own TTL (counting down, not re-set) where it had one.
func checkPlainKeys(t *testing.T, rdb *redis.Client, keys map[string]plainKey, dumps map[string]string, after string) {
	t.Helper()
	ctx := context.Background()
	for k, p := range keys {
		if got := dumpKey(t, rdb, k); got != dumps[k] {
			t.Errorf("%s: %s changed (now %q)", after, k, rdb.Get(ctx, k).Val())
		}
		ttl := rdb.PTTL(ctx, k).Val()
		if p.ttl == 0 && ttl != -1 {
			t.Errorf("%s: %s had no TTL and now has %s", after, k, ttl)
		}
		if p.ttl > 0 && (ttl <= 0 || ttl > p.ttl || ttl < p.ttl-time.Minute) {
			t.Errorf("%s: %s had a TTL of %s, now %s", after, k, p.ttl, ttl)
		}
	}
}

func TestGCRARuleLeavesPlainNumbers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	writeConfig(t, gcraRules)
	url := srv.URL()
	plain := plantGCRALookalikes(t, rdb)
	names := make([]string, 0, len(plain))
	for k := range plain {
		names = append(names, k)
	}
	before := dumps(t, rdb, names)

	// Real buckets under the same rules, written by the libraries (capacity 10, 1 token/s).
	libs := []gcraLib{
		redisRateLib(t, rdb, "u1", 1, 10, time.Second),
		throttledLib(t, rdb, "u2", 1, 9, time.Second),
	}
	for _, g := range libs {
		for i := 0; i < 4; i++ {
			if ok, _ := g.take(1); !ok {
				t.Fatalf("%s: take %d denied", g.name, i+1)
			}
		}
	}

	// list: the two library buckets only; --all shows the rest as not buckets, saying why.
	r := run(t, url, "list", "--match", "*", "-o", "json")
	var views []output.StateView
	if r.code != 0 || json.Unmarshal([]byte(r.out), &views) != nil {
		t.Fatalf("list: exit %d: %s %s", r.code, r.out, r.errOut)
	}
	listed := make([]string, 0, len(views))
	for _, v := range views {
		listed = append(listed, v.Key)
		if v.Problem != "" || v.Tokens == nil {
			t.Errorf("list row %+v", v)
		}
	}
	sort.Strings(listed)
	if want := []string{libs[0].key, libs[1].key}; strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Errorf("list shows %v, want the library buckets %v", listed, want)
	}
	views = inspectJSON(t, url, "--match", "*", "--all")
	if len(views) != len(plain)+2 {
		t.Fatalf("inspect --all: %d rows, want %d", len(views), len(plain)+2)
	}
	for _, v := range views {
		if _, isPlain := plain[v.Key]; isPlain && !strings.HasPrefix(v.Problem, "not a bucket") {
			t.Errorf("%s = %q read as a bucket under its rule: %+v", v.Key, plain[v.Key].value, v)
		}
		if v.Key == "rl:signups:total" && !strings.Contains(v.Problem, "redis-rate bucket always has a TTL") {
			t.Errorf("%s: problem %q does not say a redis-rate bucket has a TTL", v.Key, v.Problem)
		}
	}

	// inspect and check refuse each one by name (exit 1), with the rule and with --layout.
	for _, k := range []string{"rl:signups:total", "rl:ver", "tl:seen", "rl:stamp"} {
		for _, cmdName := range []string{"inspect", "check"} {
			r := run(t, url, cmdName, k)
			if r.code != ExitError || !strings.Contains(r.errOut, "not a bucket") {
				t.Errorf("%s %s: exit %d, %q %q", cmdName, k, r.code, r.out, r.errOut)
			}
		}
	}

	// reset by pattern (delete, then --tokens) and by name (--tokens, with the rule and with
	// --layout) writes and deletes none of them.
	for _, args := range [][]string{
		{"reset", "--match", "rl:*", "--yes"},
		{"reset", "--match", "tl:*", "--yes"},
		{"reset", "--match", "rl:*", "--tokens", "2", "--yes"},
		{"reset", "--match", "tl:*", "--tokens", "2", "--yes"},
	} {
		r := run(t, url, args...)
		if r.code != 0 || !strings.Contains(r.errOut, "reset 0 bucket(s)") && !strings.Contains(r.errOut, "no buckets") {
			t.Errorf("%v: exit %d: %q", args, r.code, r.errOut)
		}
	}
	for k := range plain {
		for _, extra := range [][]string{nil, {"--layout", "redis-rate"}, {"--layout", "throttled"}} {
			args := append([]string{"reset", k, "--tokens", "2", "--capacity", "10", "--rate", "1", "--yes"}, extra...)
			if r := run(t, url, args...); r.code != ExitError || !strings.Contains(r.errOut, "not a bucket") {
				t.Errorf("%v: exit %d: %q", args, r.code, r.errOut)
			}
		}
	}
	checkPlainKeys(t, rdb, plain, before, "reset")

	// The library buckets under the rules: read between the library's levels, reset to 5
	// tokens as the library counts them, then deleted by reset --match.
	for _, g := range libs {
		_, pre := g.take(0)
		v := inspectJSON(t, url, g.key)[0]
		_, post := g.take(0)
		want := map[string]string{"redis_rate": "redis-rate", "throttled": "throttled"}[g.name]
		// JSON writes tokens to 3 decimals: the bounds widen by half of that.
		const rounding = 5e-4 + 1e-9
		if v.Problem != "" || v.Layout != want || v.Tokens == nil ||
			*v.Tokens < g.level(pre)-rounding || *v.Tokens > g.level(post)+rounding {
			t.Fatalf("%s under its rule: %+v, want %s between %v and %v", g.name, v, want, g.level(pre), g.level(post))
		}
		if r := run(t, url, "reset", g.key, "--tokens", "5", "--yes"); r.code != 0 {
			t.Fatalf("%s: reset --tokens 5: exit %d: %s", g.name, r.code, r.errOut)
		}
		n := 0
		for ok, _ := g.take(1); ok && n <= 10; ok, _ = g.take(1) {
			n++
		}
		if n != 5 {
			t.Fatalf("%s: after reset --tokens 5 under its rule the library allowed %d", g.name, n)
		}
	}
	r = run(t, url, "reset", "--match", "*", "--yes")
	if r.code != 0 || !strings.Contains(r.errOut, "reset 2 bucket(s)") {
		t.Fatalf("reset --match '*': exit %d: %q", r.code, r.errOut)
	}
	for _, g := range libs {
		if rdb.Exists(context.Background(), g.key).Val() != 0 {
			t.Errorf("%s: reset --match left the bucket", g.name)
		}
	}
	checkPlainKeys(t, rdb, plain, before, "reset --match '*'")
}
