package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/scripts"
)

// multiClient is a client for srv that never re-sends a command (see bucket.Client).
func multiClient(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	o := srv.Options()
	o.MaxRetries = -1
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// multiHash reads a key as fields: a native bucket's values by their names (a hash's own
// fields for a hash), for comparisons.
func multiHash(t *testing.T, rdb redis.UniversalClient, key string) map[string]string {
	t.Helper()
	ctx := context.Background()
	if rdb.Type(ctx, key).Val() == "string" {
		n := nativeOf(t, rdb, key)
		g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
		i := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
		return map[string]string{"tokens": g(n.Tokens), "ts": i(n.TS), "capacity": g(n.Capacity), "rate": g(n.Rate),
			"allowed": i(n.Allowed), "denied": i(n.Denied)}
	}
	m, err := rdb.HGetAll(ctx, key).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	return m
}

// multiDrain takes from key until the bucket denies, so it is (nearly) empty.
func multiDrain(t *testing.T, st *bucket.Store, key string, spec bucket.Spec) {
	t.Helper()
	for i := 0; ; i++ {
		r, err := st.Take(context.Background(), key, spec, 1)
		if err != nil {
			t.Fatalf("drain %s: %v", key, err)
		}
		if !r.Allowed {
			return
		}
		if i > int(spec.Capacity)+10 {
			t.Fatalf("drain %s: still allowed after %d takes", key, i)
		}
	}
}

// TestTakeAllDenyLeavesOtherTiersUntouched is the all-or-nothing promise on the server
// clock: a full user bucket keeps its tokens, byte for byte, when the global tier denies.
func TestTakeAllDenyLeavesOtherTiersUntouched(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	testDenyLeavesOtherTiersUntouched(t, rdb, "rl:{user42}:user", "rl:{user42}:global")
}

func testDenyLeavesOtherTiersUntouched(t *testing.T, rdb redis.UniversalClient, userKey, globalKey string) {
	ctx := context.Background()
	st := bucket.NewStore(rdb)
	user := bucket.Spec{Capacity: 10, Rate: 1}
	global := bucket.Spec{Capacity: 3, Rate: 0.0001}

	// The user bucket exists and is full; the global one is empty.
	if _, err := st.Take(ctx, userKey, user, 0); err != nil {
		t.Fatal(err)
	}
	multiDrain(t, st, globalKey, global)
	before := multiHash(t, rdb, userKey)
	if before["tokens"] != "10" {
		t.Fatalf("user bucket before: tokens %q, want full (10)", before["tokens"])
	}
	globalBefore := multiHash(t, rdb, globalKey)

	tiers := []bucket.Tier{
		{Name: "user", Key: userKey, Spec: user, Cost: 1},
		{Name: "global", Key: globalKey, Spec: global, Cost: 1},
	}
	for i := 1; i <= 3; i++ {
		r, err := st.TakeAll(ctx, tiers)
		if err != nil {
			t.Fatal(err)
		}
		if r.Allowed || r.Denied != 1 {
			t.Fatalf("decision %d: allowed=%v denied=%d, want denied by tier 1 (global)", i, r.Allowed, r.Denied)
		}
		if by, ok := r.DeniedBy(); !ok || by.Name != "global" || by.Key != globalKey {
			t.Fatalf("DeniedBy = %+v, %v; want the global tier", by, ok)
		}
		if u := r.Tiers[0]; !u.Allowed || u.Remaining != 10 || u.RetryAfter != 0 || u.ResetAfter != 0 {
			t.Fatalf("user tier result %+v: want it held its cost, 10 remaining, nothing to wait", u.Result)
		}
		g := r.Tiers[1]
		if g.Allowed || g.Remaining >= 1 || g.RetryAfter <= 0 {
			t.Fatalf("global tier result %+v: want it lacked its cost and a wait", g.Result)
		}
		if got, want := r.RetryAfter(), g.RetryAfter; got != want {
			t.Fatalf("RetryAfter = %v, want the global tier's %v", got, want)
		}
		after := multiHash(t, rdb, userKey)
		if after["tokens"] != before["tokens"] {
			t.Fatalf("decision %d: user tokens %q -> %q: a denied decision took from the user bucket", i, before["tokens"], after["tokens"])
		}
		if multiCounter(t, after, "allowed") != multiCounter(t, before, "allowed") || multiCounter(t, after, "denied") != multiCounter(t, before, "denied") {
			t.Fatalf("decision %d: user counters %s/%s -> %s/%s: the user tier did not deny", i,
				before["allowed"], before["denied"], after["allowed"], after["denied"])
		}
		if ts0, ts1 := multiInt(t, before["ts"]), multiInt(t, after["ts"]); ts1 < ts0 {
			t.Fatalf("user ts went back: %d -> %d", ts0, ts1)
		}
		ga := multiHash(t, rdb, globalKey)
		if got, want := multiCounter(t, ga, "denied"), multiCounter(t, globalBefore, "denied")+int64(i); got != want {
			t.Fatalf("global denied = %d, want %d", got, want)
		}
		if multiCounter(t, ga, "allowed") != multiCounter(t, globalBefore, "allowed") {
			t.Fatalf("global allowed %s -> %s on a denied decision", globalBefore["allowed"], ga["allowed"])
		}
	}
	// The pipelined alternative, one Take per tier, would have drained the user bucket:
	// that is what TakeAll exists to avoid. Check the contrast so the test above means it.
	if r, _ := st.Take(ctx, userKey, user, 1); !r.Allowed || r.Remaining >= 10 {
		t.Fatalf("single Take on the user bucket: %+v, want allowed and a token gone", r)
	}
}

// multiCounter reads a decision counter of hash h; a counter never moved is absent: 0.
func multiCounter(t *testing.T, h map[string]string, field string) int64 {
	t.Helper()
	if v, ok := h[field]; ok {
		return multiInt(t, v)
	}
	return 0
}

func multiInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}

// TestTakeAllAllowedTakesFromEveryTier checks the allowed path and the counters.
func TestTakeAllAllowedTakesFromEveryTier(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	clk := &fakeClock{}
	clk.us.Store(1_700_000_000_000_000)
	st := bucket.NewStore(rdb, bucket.WithClientClock(clk.now))
	ctx := context.Background()
	tiers := []bucket.Tier{
		{Name: "user", Key: "rl:{u1}:user", Spec: bucket.Spec{Capacity: 5, Rate: 1}, Cost: 2},
		{Name: "endpoint", Key: "rl:{u1}:endpoint:/search", Spec: bucket.Spec{Capacity: 3, Rate: 0.5}, Cost: 1.5},
	}
	r, err := st.TakeAll(ctx, tiers)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Allowed || r.Denied != -1 {
		t.Fatalf("first decision: %+v, want allowed", r)
	}
	if _, ok := r.DeniedBy(); ok {
		t.Fatal("DeniedBy reports a tier on an allowed decision")
	}
	want := []struct {
		rem          float64
		retry, reset time.Duration
	}{{3, 0, 2 * time.Second}, {1.5, 0, 3 * time.Second}}
	for i, w := range want {
		got := r.Tiers[i]
		if got.Name != tiers[i].Name || got.Key != tiers[i].Key || got.Spec != tiers[i].Spec {
			t.Fatalf("tier %d labelled %q %q %+v", i, got.Name, got.Key, got.Spec)
		}
		if !got.Allowed || got.Remaining != w.rem || got.RetryAfter != w.retry || got.ResetAfter != w.reset {
			t.Fatalf("tier %d: %+v, want remaining %v retry %v reset %v", i, got.Result, w.rem, w.retry, w.reset)
		}
		h := multiHash(t, rdb, tiers[i].Key)
		if multiCounter(t, h, "allowed") != 1 || multiCounter(t, h, "denied") != 0 || parse(t, h["tokens"]) != w.rem {
			t.Fatalf("tier %d hash %v", i, h)
		}
		if h["capacity"] != strconv.FormatFloat(tiers[i].Spec.Capacity, 'g', -1, 64) || h["rate"] != strconv.FormatFloat(tiers[i].Spec.Rate, 'g', -1, 64) {
			t.Fatalf("tier %d hash does not describe its spec: %v", i, h)
		}
	}
	// Second decision at the same instant: the endpoint tier (1.5 left) holds 1.5, the user
	// tier (3 left) holds 2: allowed. The third is denied by both; denied counts on both.
	if r, err = st.TakeAll(ctx, tiers); err != nil || !r.Allowed {
		t.Fatalf("second decision: %+v, %v", r, err)
	}
	if r, err = st.TakeAll(ctx, tiers); err != nil || r.Allowed || r.Denied != 0 {
		t.Fatalf("third decision: %+v, %v; want denied by tier 0", r, err)
	}
	// user has 1, needs 2 at 1/s: 1 s; endpoint has 0, needs 1.5 at 0.5/s: 3 s.
	if r.Tiers[0].RetryAfter != time.Second || r.Tiers[1].RetryAfter != 3*time.Second || r.RetryAfter() != 3*time.Second {
		t.Fatalf("waits %v %v overall %v, want 1s 3s 3s", r.Tiers[0].RetryAfter, r.Tiers[1].RetryAfter, r.RetryAfter())
	}
	for _, tr := range tiers {
		h := multiHash(t, rdb, tr.Key)
		if h["allowed"] != "2" || h["denied"] != "1" {
			t.Fatalf("%s counters allowed=%s denied=%s, want 2/1", tr.Key, h["allowed"], h["denied"])
		}
	}
}

// TestTakeAllTTL checks each tier's TTL follows token_bucket.lua's rule (the prelude's
// ttl_ms()): set with every write to the time to refill to full plus the grace.
func TestTakeAllTTL(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	clk := &fakeClock{}
	clk.us.Store(1_700_000_000_000_000)
	st := bucket.NewStore(rdb, bucket.WithClientClock(clk.now), bucket.WithTTLGrace(5*time.Second))
	ctx := context.Background()
	tiers := []bucket.Tier{
		{Key: "ttl:{a}:1", Spec: bucket.Spec{Capacity: 10, Rate: 0.5}, Cost: 4},     // 8 s to full
		{Key: "ttl:{a}:2", Spec: bucket.Spec{Capacity: 100, Rate: 100}, Cost: 0.25}, // 2.5 ms to full
		{Key: "ttl:{a}:3", Spec: bucket.Spec{Capacity: 100, Rate: 100}, Cost: 1},    // 10 ms to full
	}
	// Tier 3 exists with a TTL of an hour (an operator's): the write sets its own.
	if _, err := st.Take(ctx, tiers[2].Key, tiers[2].Spec, 0); err != nil {
		t.Fatal(err)
	}
	if err := rdb.PExpire(ctx, tiers[2].Key, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TakeAll(ctx, tiers); err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{13 * time.Second, 5003 * time.Millisecond, 5010 * time.Millisecond} {
		got, err := rdb.PTTL(ctx, tiers[i].Key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got > want || got < want-time.Second {
			t.Fatalf("tier %d PTTL %v, want about %v", i, got, want)
		}
	}
}

// TestTakeAllInvalid checks the Go side refuses bad tiers before calling Redis, and the
// script refuses bad arguments from other callers without writing anything.
func TestTakeAllInvalid(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	st := bucket.NewStore(rdb)
	ctx := context.Background()
	ok := bucket.Spec{Capacity: 5, Rate: 1}
	for name, tiers := range map[string][]bucket.Tier{
		"no tiers":       nil,
		"empty key":      {{Key: "", Spec: ok, Cost: 1}},
		"zero rate":      {{Key: "inv:a", Spec: ok, Cost: 1}, {Key: "inv:b", Spec: bucket.Spec{Capacity: 1}, Cost: 1}},
		"NaN capacity":   {{Key: "inv:a", Spec: bucket.Spec{Capacity: math.NaN(), Rate: 1}, Cost: 1}},
		"negative cost":  {{Key: "inv:a", Spec: ok, Cost: -1}},
		"infinite cost":  {{Key: "inv:a", Spec: ok, Cost: math.Inf(1)}},
		"cost > cap":     {{Key: "inv:a", Spec: ok, Cost: 6}},
		"duplicate keys": {{Key: "inv:a", Spec: ok, Cost: 1}, {Key: "inv:a", Spec: ok, Cost: 1}},
	} {
		if _, err := st.TakeAll(ctx, tiers); !errors.Is(err, bucket.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("invalid tiers wrote %d keys", n)
	}

	// Straight to the script, as another client could call it: tier 2 is bad, tier 1 must
	// stay unwritten.
	eval := func(args ...interface{}) error {
		return rdb.Eval(ctx, scripts.MultiBucket(), []string{"inv:a", "inv:b"}, args...).Err()
	}
	for name, c := range map[string]struct {
		args []interface{}
		msg  string
	}{
		"bad capacity":  {[]interface{}{"", "", "5", "1", "1", "abc", "1", "1"}, "capacity must be a positive finite number of at most 1e15 (tier 2)"},
		"zero capacity": {[]interface{}{"", "", "5", "1", "1", "0", "1", "1"}, "capacity must be a positive finite number of at most 1e15 (tier 2)"},
		"inf rate":      {[]interface{}{"", "", "5", "1", "1", "5", "inf", "1"}, "rate must be a positive finite number (tier 2)"},
		"nan cost":      {[]interface{}{"", "", "5", "1", "1", "5", "1", "nan"}, "cost must be a finite number >= 0 (tier 2)"},
		"negative cost": {[]interface{}{"", "", "5", "1", "1", "5", "1", "-1"}, "cost must be a finite number >= 0 (tier 2)"},
		"no spec":       {[]interface{}{"", "", "5", "1", "1", "", "", "1"}, "no capacity/rate given and none stored in the bucket (tier 2)"},
		"bad now":       {[]interface{}{"soon", "", "5", "1", "1", "5", "1", "1"}, "now must be microseconds"},
		"hex now":       {[]interface{}{"0x10", "", "5", "1", "1", "5", "1", "1"}, "now must be microseconds"},
		"negative now":  {[]interface{}{"-5", "", "5", "1", "1", "5", "1", "1"}, "now must be microseconds"},
		"inf grace":     {[]interface{}{"", "inf", "5", "1", "1", "5", "1", "1"}, "TTL grace must be whole milliseconds"},
		"slow refill":   {[]interface{}{"", "", "5", "1", "1", "1e15", "0.001", "1"}, "capacity/rate must refill within 100 years (tier 2)"},
		"huge capacity": {[]interface{}{"", "", "5", "1", "1", "2e15", "1e9", "1"}, "capacity must be a positive finite number of at most 1e15 (tier 2)"},
		"arg count":     {[]interface{}{"", "", "5", "1", "1"}, "want 2 + 3 arguments per key"},
	} {
		err := eval(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", name, err, c.msg)
		}
	}
	if err := rdb.Eval(ctx, scripts.MultiBucket(), []string{"inv:a", "inv:a"}, "", "", "5", "1", "1", "5", "1", "1").Err(); err == nil || !strings.Contains(err.Error(), "duplicate key (tier 2)") {
		t.Errorf("duplicate keys: err = %v", err)
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("invalid script arguments wrote %d keys", n)
	}

	// Through the Store, the script's errors name the tier and map to the package errors.
	if err := rdb.Set(ctx, "inv:str", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := st.TakeAll(ctx, []bucket.Tier{{Name: "user", Key: "inv:a", Spec: ok, Cost: 1}, {Name: "global", Key: "inv:str", Spec: ok, Cost: 1}})
	if !errors.Is(err, bucket.ErrWrongType) || !strings.Contains(err.Error(), `"global"`) || !strings.Contains(err.Error(), "inv:str") {
		t.Fatalf("string key: err = %v, want ErrWrongType naming the global tier and its key", err)
	}
	if err := rdb.HSet(ctx, "inv:foreign", "tokens", "3", "last_refill", "1700000000").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, "inv:hash", "name", "not a bucket").Err(); err != nil {
		t.Fatal(err)
	}
	_, err = st.TakeAll(ctx, []bucket.Tier{{Name: "user", Key: "inv:a", Spec: ok, Cost: 1}, {Name: "seed", Key: "inv:foreign", Spec: ok, Cost: 1}})
	if !errors.Is(err, bucket.ErrForeign) || !strings.Contains(err.Error(), `"seed"`) {
		t.Fatalf("another layout's bucket: err = %v, want ErrForeign naming the tier", err)
	}
	_, err = st.TakeAll(ctx, []bucket.Tier{{Name: "user", Key: "inv:a", Spec: ok, Cost: 1}, {Name: "other", Key: "inv:hash", Spec: ok, Cost: 1}})
	if !errors.Is(err, bucket.ErrWrongType) {
		t.Fatalf("a hash that is no bucket: err = %v, want ErrWrongType", err)
	}
	if h := multiHash(t, rdb, "inv:foreign"); len(h) != 2 || h["tokens"] != "3" {
		t.Fatalf("another layout's bucket was written: %v", h)
	}
	_, err = st.TakeAll(ctx, []bucket.Tier{{Name: "user", Key: "inv:a", Spec: ok, Cost: 1}, {Name: "endpoint", Key: "inv:new", Cost: 1}})
	if !errors.Is(err, bucket.ErrNoSpec) || !strings.Contains(err.Error(), `"endpoint"`) {
		t.Fatalf("missing bucket with zero spec: err = %v, want ErrNoSpec naming the endpoint tier", err)
	}
	if n, _ := rdb.Exists(ctx, "inv:a", "inv:new").Result(); n != 0 {
		t.Fatalf("a refused decision wrote %d buckets", n)
	}
}

// TestTakeAllImpossibleCost checks that a tier whose stored capacity is below its cost
// denies the decision forever and touches no bucket, as Take does for such a cost.
func TestTakeAllImpossibleCost(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	st := bucket.NewStore(rdb)
	ctx := context.Background()
	small := bucket.Spec{Capacity: 2, Rate: 1}
	if _, err := st.Take(ctx, "imp:{x}:small", small, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Take(ctx, "imp:{x}:user", bucket.Spec{Capacity: 10, Rate: 1}, 0); err != nil {
		t.Fatal(err)
	}
	before := [2]map[string]string{multiHash(t, rdb, "imp:{x}:user"), multiHash(t, rdb, "imp:{x}:small")}
	r, err := st.TakeAll(ctx, []bucket.Tier{
		{Name: "user", Key: "imp:{x}:user", Spec: bucket.Spec{Capacity: 10, Rate: 1}, Cost: 3},
		{Name: "small", Key: "imp:{x}:small", Cost: 3}, // stored spec: capacity 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Allowed || r.Denied != 1 || r.Tiers[1].RetryAfter != -1 || r.RetryAfter() != -1 || r.Tiers[1].Spec != small {
		t.Fatalf("result %+v, want denied by the small tier, never retry, stored spec", r)
	}
	for i, k := range []string{"imp:{x}:user", "imp:{x}:small"} {
		if after := multiHash(t, rdb, k); fmt.Sprint(after) != fmt.Sprint(before[i]) {
			t.Fatalf("%s changed: %v -> %v", k, before[i], after)
		}
	}
	// The model agrees: nothing written.
	_, written, m := bucket.TakeAllModel([]bucket.Tier{
		{Spec: bucket.Spec{Capacity: 10, Rate: 1}, Cost: 3}, {Spec: small, Cost: 3},
	}, make([]bucket.Level, 2), []bool{false, false}, 1)
	if written || m.Allowed || m.Denied != 1 || m.RetryAfter() != -1 {
		t.Fatalf("model: written=%v result %+v", written, m)
	}
}

// TestTTLAfterSittingFull: a bucket that sat full has a TTL run down while its time to full
// stayed 0; the first take from it sets the TTL again, or the key would expire before it
// refills and forgive the tokens taken. For Take and TakeAll alike, from a native-hash
// bucket (converted by the take).
func TestTTLAfterSittingFull(t *testing.T) {
	srv := redistest.Start(t)
	rdb := multiClient(t, srv)
	st := bucket.NewStore(rdb, bucket.WithTTLGrace(5*time.Second))
	ctx := context.Background()
	sp := bucket.Spec{Capacity: 100, Rate: 100}
	for name, take := range map[string]func(key string) error{
		"Take": func(key string) error { _, err := st.Take(ctx, key, sp, 1); return err },
		"TakeAll": func(key string) error {
			_, err := st.TakeAll(ctx, []bucket.Tier{{Key: key, Spec: sp, Cost: 1}})
			return err
		},
	} {
		key := "full:{a}:" + name
		now := time.Now().UnixMicro()
		// Full, one allow counted, and a TTL of 50 ms left, as after sitting full for most of
		// its grace.
		if err := rdb.HSet(ctx, key, "tokens", "100", "ts", now, "capacity", "100", "rate", "100", "allowed", "1").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.PExpire(ctx, key, 50*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		if err := take(key); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Wanted: time to full (10 ms) + grace (5 s), and for Take half the grace again as
		// headroom (WithTTLGrace).
		want := 5010 * time.Millisecond
		if name == "Take" {
			want += 2500 * time.Millisecond
		}
		if got := rdb.PTTL(ctx, key).Val(); got < want-510*time.Millisecond || got > want {
			t.Errorf("%s from a full bucket with 50 ms of TTL left: PTTL %v, want about %v", name, got, want)
		}
	}
}
