package bucket_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/sandbox"
	"github.com/bucketctl/bucketctl/scripts"
)

// nativeOf reads the native bucket at key, failing the test when it is not one.
func nativeOf(t *testing.T, c redis.Cmdable, key string) bucket.NativeValues {
	t.Helper()
	v, err := c.Get(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	n, problem := bucket.DecodeNative(v)
	if problem != "" {
		t.Fatalf("%s: %s", key, problem)
	}
	return n
}

// setNativeHash writes a native bucket the way the layout before the tagged string did.
func setNativeHash(t *testing.T, c redis.Cmdable, key string, fields ...any) {
	t.Helper()
	if err := c.HSet(context.Background(), key, fields...).Err(); err != nil {
		t.Fatal(err)
	}
}

// A decision writes one string: the tag, then level, time, spec and counters, with a TTL of
// the time to full plus the grace; inspect reads it whole.
func TestNativeIsOneTaggedString(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	clock := newClock(1_700_000_000_000_000)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now), bucket.WithTTLGrace(5*time.Second))
	for i := 0; i < 3; i++ {
		if _, err := st.Take(ctx, "k", spec(4, 2), 1); err != nil {
			t.Fatal(err)
		}
	}
	if typ := c.Type(ctx, "k").Val(); typ != "string" {
		t.Fatalf("TYPE %s, want string", typ)
	}
	raw := c.Get(ctx, "k").Val()
	if !strings.HasPrefix(raw, "bucketctl:v1:") {
		t.Fatalf("value %q does not start with the tag", raw)
	}
	n := nativeOf(t, c, "k")
	want := bucket.NativeValues{Tokens: 1, TS: 1_700_000_000_000_000, Capacity: 4, Rate: 2, Allowed: 3, Last: true}
	if n != want {
		t.Fatalf("stored %+v, want %+v", n, want)
	}
	// Time to full 1.5 s + grace 5 s.
	if ttl := c.PTTL(ctx, "k").Val(); ttl <= 6*time.Second || ttl > 6500*time.Millisecond {
		t.Fatalf("PTTL %v, want 6.5 s less the time since", ttl)
	}
	// A deny writes too: it counts.
	if r, err := st.Take(ctx, "k", spec(4, 2), 3); err != nil || r.Allowed {
		t.Fatalf("take 3 of 1: %+v %v", r, err)
	}
	if n := nativeOf(t, c, "k"); n.Denied != 1 || n.Allowed != 3 {
		t.Fatalf("after a deny %+v", n)
	}
	s, err := st.Inspect(ctx, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Problem != "" || s[0].Layout.Name != "native" || s[0].Spec != spec(4, 2) || s[0].Allowed != 3 || s[0].Denied != 1 ||
		s[0].Stored.Tokens != 1 {
		t.Fatalf("inspect %+v", s[0])
	}
}

// A string without the tag, a tagged string of another length and other types are refused
// by a decision and left untouched.
func TestNativeRefusesUntagged(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c)
	c.Set(ctx, "plain", "5", 0)
	c.Set(ctx, "short", "bucketctl:v1:abc", 0)
	c.RPush(ctx, "list", "a")
	bad := bucket.EncodeNative(bucket.NativeValues{Tokens: -1, TS: 1, Capacity: 10, Rate: 1})
	c.Set(ctx, "neg", bad, 0)
	for key, want := range map[string]error{"plain": bucket.ErrWrongType, "list": bucket.ErrWrongType,
		"short": bucket.ErrCorrupt, "neg": bucket.ErrCorrupt} {
		before := dump(t, c, key)
		_, err := st.Take(ctx, key, spec(10, 1), 1)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", key, err, want)
		}
		if dump(t, c, key) != before {
			t.Errorf("%s changed", key)
		}
	}
	s, err := st.Inspect(ctx, []string{"short", "neg"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range s {
		if !strings.HasPrefix(x.Problem, "corrupt: ") {
			t.Errorf("%s: problem %q, want corrupt", x.Key, x.Problem)
		}
	}
}

// A bucket of the hash layout written before (native-hash) is inspected and reset as it is,
// and its first decision converts it to the tagged string, keeping level, time, spec and
// counters.
func TestNativeHashReadResetAndConverted(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now := int64(1_700_000_000_000_000)
	clock := newClock(now)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now))
	ts := strconv.FormatInt(now, 10)
	setNativeHash(t, c, "old", "tokens", "2.5", "ts", ts, "capacity", "10", "rate", "0.5", "allowed", "7", "denied", "3")
	setNativeHash(t, c, "old2", "tokens", "4", "ts", ts, "capacity", "10", "rate", "1", "allowed", "1", "denied", "0")

	s, err := st.Inspect(ctx, []string{"old"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Problem != "" || s[0].Layout.Name != "native-hash" || s[0].Tokens != 2.5 || s[0].Spec != spec(10, 0.5) ||
		s[0].Allowed != 7 || s[0].Denied != 3 {
		t.Fatalf("inspect %+v", s[0])
	}
	// A reset to 6 tokens writes the tagged string, spec and counters kept.
	if _, err := st.ResetState(ctx, s[0], bucket.ResetTo{Tokens: 6}); err != nil {
		t.Fatal(err)
	}
	if n := nativeOf(t, c, "old"); n != (bucket.NativeValues{Tokens: 6, TS: float64(now), Capacity: 10, Rate: 0.5, Allowed: 7, Denied: 3}) {
		t.Fatalf("after reset %+v", n)
	}
	if ttl := c.PTTL(ctx, "old").Val(); ttl <= 60*time.Second || ttl > 68*time.Second {
		t.Fatalf("PTTL after reset %v, want 8 s to full + 60 s", ttl)
	}

	// The first decision on a native-hash bucket converts it.
	clock.add(time.Second)
	r, err := st.Take(ctx, "old2", bucket.Spec{}, 2)
	if err != nil || !r.Allowed || r.Remaining != 3 {
		t.Fatalf("take from the hash: %+v %v", r, err)
	}
	if typ := c.Type(ctx, "old2").Val(); typ != "string" {
		t.Fatalf("TYPE after the decision %s", typ)
	}
	if n := nativeOf(t, c, "old2"); n != (bucket.NativeValues{Tokens: 3, TS: float64(now + 1e6), Capacity: 10, Rate: 1, Allowed: 2, Last: true}) {
		t.Fatalf("converted %+v", n)
	}

	// A refill of a native-hash bucket writes it full, as the tagged string, spec kept.
	setNativeHash(t, c, "old3", "tokens", "1", "ts", ts, "capacity", "10", "rate", "1")
	s, err = st.Inspect(ctx, []string{"old3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ResetState(ctx, s[0], bucket.ResetTo{Delete: true}); err != nil {
		t.Fatal(err)
	}
	if n := nativeOf(t, c, "old3"); n.Tokens != 10 || n.Capacity != 10 || n.Rate != 1 {
		t.Fatalf("old3 after its refill: %+v", n)
	}
}

// One number rule: every value a writer can produce (a level of 1e-300, a cost of 1e-400
// that reads as 0, a rate of 1e-9/s, a full-range capacity) is read back as the same bucket
// by every reader.
func TestNativeExtremesRoundTrip(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	clock := newClock(1_700_000_000_000_000)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now))
	server := bucket.NewStore(c)
	specs := []bucket.Spec{spec(1e-300, 1e-300), spec(1e-3, 1e-9), spec(1e15, 1e15), spec(3, 1e-9), spec(1, 1e300)}
	costs := []float64{0, 1e-300, 5e-324, 0.1, 1}
	for i, sp := range specs {
		for j, cost := range costs {
			key := "x" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
			if cost > sp.Capacity {
				cost = sp.Capacity
			}
			if _, err := st.Take(ctx, key, sp, cost); err != nil {
				t.Fatalf("take %s %+v %v: %v", key, sp, cost, err)
			}
			if _, err := st.TakeAll(ctx, []bucket.Tier{{Key: key + "a", Spec: sp, Cost: cost}, {Key: key, Spec: sp, Cost: cost}}); err != nil {
				t.Fatalf("takeall %s: %v", key, err)
			}
			for _, to := range []float64{1e-300, 5e-324, sp.Capacity, sp.Capacity / 3} {
				if _, err := st.Reset(ctx, key+"r", bucket.NativeLayout, sp, bucket.ResetTo{Tokens: to}); err != nil {
					t.Fatalf("reset %s to %v: %v", key, to, err)
				}
				n := nativeOf(t, c, key+"r")
				if n.Tokens != to || n.Capacity != sp.Capacity || n.Rate != sp.Rate {
					t.Fatalf("reset %s to %v reads %+v", key, to, n)
				}
				if _, err := st.Take(ctx, key+"r", bucket.Spec{}, 0); err != nil {
					t.Fatalf("take after reset %s to %v: %v", key, to, err)
				}
			}
			// On the server clock the second decision rewrites its record in place
			// (SETRANGE): the reply and the stored bucket are the same numbers.
			for range 2 {
				r, err := server.Take(ctx, key+"s", sp, cost)
				n := nativeOf(t, c, key+"s")
				if err != nil || n.Tokens != r.Remaining || n.Capacity != sp.Capacity || n.Rate != sp.Rate || r.Spec != sp {
					t.Fatalf("server-clock take %s: %+v %v, stored %+v", key, r, err, n)
				}
			}
			// A cost of 1e-400 is 0 to the script's grammar, as to Go's.
			if err := c.Eval(ctx, scripts.TokenBucket(), []string{key + "s"}, fmtF(sp.Capacity), fmtF(sp.Rate), "1e-400").Err(); err != nil {
				t.Fatalf("cost 1e-400 on %s: %v", key, err)
			}
			states, err := st.Inspect(ctx, []string{key, key + "a", key + "r", key + "s"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range states {
				if s.Problem != "" || s.Layout.Name != "native" || s.Spec != sp {
					t.Fatalf("%s reads %+v", s.Key, s)
				}
			}
		}
	}
}

// An ACL user without PEXPIRE and PTTL decides in full: a decision writes its value and TTL
// in one SET PX.
func TestNativeDecisionNeedsNoExpireCommands(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithACL("app on >app-pass ~* +@all -pexpire -pttl -expire -ttl"))
	opt := srv.Options()
	opt.Username, opt.Password = "app", "app-pass"
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.PTTL(ctx, "k").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("PTTL as app: %v, want NOPERM", err)
	}
	st := bucket.NewStore(c)
	for i := 0; i < 3; i++ {
		if r, err := st.Take(ctx, "k", spec(10, 1), 1); err != nil || !r.Allowed {
			t.Fatalf("take %d: %+v %v", i, r, err)
		}
	}
	if _, err := st.TakeAll(ctx, []bucket.Tier{{Key: "{m}a", Spec: spec(5, 1), Cost: 1}, {Key: "{m}b", Spec: spec(5, 1), Cost: 1}}); err != nil {
		t.Fatal(err)
	}
	admin := srv.Client(t)
	for _, k := range []string{"k", "{m}a", "{m}b"} {
		if ttl := admin.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("%s: PTTL %v, want a TTL", k, ttl)
		}
	}
	if n := nativeOf(t, admin, "k"); n.Allowed != 3 || n.Capacity != 10 {
		t.Fatalf("stored %+v", n)
	}
}

// The in-process sandbox (miniredis, whose Lua has no struct library) packs and reads the
// native value to the bit as Redis does.
func TestNativeInProcessPacking(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sb, err := sandbox.Start(ctx, sandbox.Options{ForceInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	c := redis.NewClient(&redis.Options{Addr: sb.Addr()})
	t.Cleanup(func() { c.Close() })
	clock := newClock(1_700_000_000_123_457)
	st := bucket.NewStore(c, bucket.WithClientClock(clock.now))
	for i, sp := range []bucket.Spec{spec(1000, 250000), spec(3, 0.001), spec(0.1, 0.7), spec(7, 0.003)} {
		key := "p" + strconv.Itoa(i)
		if _, err := st.Take(ctx, key, sp, sp.Capacity/3); err != nil {
			t.Fatalf("take %+v: %v", sp, err)
		}
		n := nativeOf(t, c, key)
		want := bucket.NativeValues{Tokens: sp.Capacity - sp.Capacity/3, TS: 1_700_000_000_123_457, Capacity: sp.Capacity, Rate: sp.Rate, Allowed: 1, Last: true}
		if n != want {
			t.Fatalf("%s: stored %+v, want %+v", key, n, want)
		}
		if r, err := st.Take(ctx, key, bucket.Spec{}, 0); err != nil || r.Spec != sp || r.Remaining != want.Tokens {
			t.Fatalf("%s read back: %+v %v", key, r, err)
		}
	}
}
