package scan_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// seedNativePage writes 200 native buckets (n:b:*, some without a TTL, drained, ahead of
// the clock, with counters), two tagged strings that are not six doubles in range, and keys
// of other kinds among them: an express hash, a webman pair, a counter, a list, a long
// string. It returns every key.
func seedNativePage(t *testing.T, c *redis.Client) []string {
	t.Helper()
	ctx := context.Background()
	now := float64(time.Now().UnixMicro())
	var keys []string
	set := func(k, v string, ttl time.Duration) {
		if err := c.Set(ctx, k, v, ttl).Err(); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	for i := 0; i < 200; i++ {
		v := bucket.NativeValues{Tokens: float64(i % 11), TS: now - float64(i)*1e5, Capacity: 10, Rate: 0.5,
			Allowed: float64(i), Denied: float64(i % 3)}
		if i%50 == 7 {
			v.TS = now + 3e6 // ahead of the server's clock
		}
		ttl := time.Hour
		if i%40 == 3 {
			ttl = 0 // no TTL
		}
		set(fmt.Sprintf("n:b:%03d", i), bucket.EncodeNative(v), ttl)
	}
	bad := bucket.EncodeNative(bucket.NativeValues{Tokens: -1, TS: now, Capacity: 10, Rate: 1})
	set("n:bad", bad, time.Hour)
	set("n:long", bad+"tail", time.Hour)
	set("n:webman", "4", 0)
	set("n:webman:last_time", fmt.Sprintf("%.4f", now/1e6), 0)
	set("n:counter", "17", time.Minute)
	set("n:page", strings.Repeat("x", 5000), 0)
	for _, k := range []string{"n:ex", "n:queue"} {
		keys = append(keys, k)
	}
	if err := c.HSet(ctx, "n:ex", "tokens", "3", "last_refill", fmt.Sprintf("%.3f", now/1e6)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.RPush(ctx, "n:queue", "job").Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// sameState says how got (a scan's read) differs from want (the read script's, by name),
// "" when in nothing but the moment of reading (Now, a TTL a second apart).
func sameState(got, want bucket.State) string {
	ttl := got.TTL - want.TTL
	if ttl < -time.Second || ttl > time.Second || (got.TTL < 0) != (want.TTL < 0) {
		return fmt.Sprintf("TTL %v, want %v", got.TTL, want.TTL)
	}
	type fields struct {
		Type, Layout, SpecSource, Problem, Guess string
		Exists, Detected, Bare                   bool
		Spec                                     bucket.Spec
		Stored                                   bucket.Level
		Allowed, Denied                          int64
		Ahead                                    bool
	}
	f := func(s bucket.State) fields {
		return fields{s.Type, s.Layout.Name, s.SpecSource, s.Problem, s.Guess, s.Exists, s.Detected, s.Bare,
			s.Spec, s.Stored, s.Allowed, s.Denied, s.Ahead > 0}
	}
	if f(got) != f(want) {
		return fmt.Sprintf("%+v, want %+v", f(got), f(want))
	}
	return ""
}

// TestNativePagesReadWithPlainCommands: a scan of a keyspace that is mostly native buckets
// reads its pages with GETRANGE and PTTL, not the read script, and every key comes out as
// the read script reads it by name (inspect), the keys that are not native buckets too.
func TestNativePagesReadWithPlainCommands(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	keys := seedNativePage(t, c)
	st := bucket.NewStore(c)
	byName, err := st.Inspect(ctx, keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bucket.State{}
	for _, s := range byName {
		want[s.Key] = s
	}
	before := redistest.CommandCalls(t, c)
	got := map[string]bucket.State{}
	_, err = scan.States(ctx, st, scan.Options{Match: "n:*", Count: 20}, func(states []bucket.State) error {
		for _, s := range states {
			got[s.Key] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after := redistest.CommandCalls(t, c)
	if len(got) != len(keys)-1 { // the webman time key belongs to its bucket
		t.Fatalf("scan read %d keys, want %d", len(got), len(keys)-1)
	}
	for k, g := range got {
		if d := sameState(g, want[k]); d != "" {
			t.Errorf("%s: scanned %s", k, d)
		}
	}
	if g := got["n:b:010"]; g.Problem != "" || g.Layout.Name != "native" || g.Allowed != 10 {
		t.Errorf("n:b:010 scanned as %+v, want a native bucket with 10 allowed", g)
	}
	// Pages after the first (read with the script) go to GETRANGE and PTTL first.
	gets, scripts := after["getrange"]-before["getrange"], after["evalsha_ro"]-before["evalsha_ro"]
	if gets < 150 || scripts > 60 {
		t.Errorf("%d GETRANGE and %d read scripts for %d keys: want most read with GETRANGE", gets, scripts, len(keys))
	}
}

// TestNativePagesWithoutGetrangeACL: a user whose ACL has no +getrange (the read-only ACL
// of earlier versions) still lists every key: the refused page is read with the script.
func TestNativePagesWithoutGetrangeACL(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	keys := seedNativePage(t, admin)
	if err := admin.Do(ctx, "ACL", "SETUSER", "ro", "on", ">pw", "resetchannels", "%R~*", "-@all",
		"+ping", "+type", "+pttl", "+hgetall", "+get", "+time", "+scan", "+evalsha_ro", "+eval_ro", "+hlen", "+strlen").Err(); err != nil {
		t.Fatal(err)
	}
	o := srv.Options()
	o.Username, o.Password = "ro", "pw"
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	st := bucket.NewStore(c)
	n, natives := 0, 0
	for pass := 0; pass < 2; pass++ { // a second scan with the same Store reads alike
		n, natives = 0, 0
		_, err := scan.States(ctx, st, scan.Options{Match: "n:*", Count: 20}, func(states []bucket.State) error {
			for _, s := range states {
				n++
				if s.Problem == "" && s.Layout.Name == "native" {
					natives++
				}
			}
			return nil
		})
		if err != nil || n != len(keys)-1 || natives != 200 {
			t.Fatalf("pass %d: err %v, %d keys (%d native buckets), want %d (200)", pass, err, n, natives, len(keys)-1)
		}
	}
	if calls := redistest.CommandCalls(t, admin); calls["getrange"] != 0 {
		t.Fatalf("%d GETRANGE ran for a user not allowed it", calls["getrange"])
	}
}

// BenchmarkScanNative10k: a streaming scan of 10,000 native buckets (the page read of
// GETRANGE and PTTL after the first two pages); reports the commands per pass.
//
//	go test ./bucket/scan -run NONE -bench ScanNative10k -benchmem -cpuprofile cpu.out
func BenchmarkScanNative10k(b *testing.B) {
	srv := redistest.Start(b)
	c := srv.Client(b)
	ctx := context.Background()
	pipe := c.Pipeline()
	v := bucket.EncodeNative(bucket.NativeValues{Tokens: 3, TS: float64(time.Now().UnixMicro()), Capacity: 10, Rate: 1})
	for i := 0; i < 10000; i++ {
		pipe.Set(ctx, fmt.Sprintf("nb:%05d", i), v, time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	rt := &redistest.Counter{}
	c.AddHook(rt)
	st := bucket.NewStore(c)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if _, err := scan.States(ctx, st, scan.Options{Match: "nb:*"}, func(states []bucket.State) error {
			n += len(states)
			return nil
		}); err != nil || n != 10000 {
			b.Fatalf("%d %v", n, err)
		}
	}
	b.ReportMetric(float64(rt.Commands.Load())/float64(b.N), "commands/op")
}
