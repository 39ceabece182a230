package bucket_test

// The oracle of the mennanov preset: mennanov/limiters' TokenBucket over its
// TokenBucketRedis backend, ported here line by line from
// scripts/third_party/mennanov-limiters/tokenbucket.go.txt (comments cite its lines) and run
// over a real redis-server. The port takes its clock as an argument (the library's Clock),
// so bucketctl's check is compared with it at the instant of bucketctl's read, and buckets
// are written at clocks ahead and behind. The module itself is not a dependency: it pulls
// in etcd, gRPC, AWS, Azure and memcache clients for one file's worth of Redis code.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// mnState is TokenBucketState (tokenbucket.go:31-36); isZero is 39-41.
type mnState struct {
	Last      int64
	Available int64
}

func (s mnState) isZero() bool { return s.Last == 0 && s.Available == 0 }

var (
	errMNLimitExhausted = errors.New("requests limit exhausted")
	errMNRaceCondition  = errors.New("race condition detected")
)

// mnBucket is TokenBucket (tokenbucket.go:54-64; its locker a no-op, the test being its one
// caller) over TokenBucketRedis (459-465); legacy is the same over v1.13.0's
// TokenBucketRedis (tokenbucket-v1.13.0.go.txt), which kept the two-key form.
type mnBucket struct {
	legacy      bool
	rdb         *redis.Client
	prefix      string
	ttl         time.Duration
	raceCheck   bool
	lastVersion int64
	refillRate  time.Duration
	capacity    int64
}

// redisKey is tokenbucket.go:447-449.
func mnKey(prefix, key string) string { return fmt.Sprintf("{%s}%s", prefix, key) }

// take is takeMinMax (tokenbucket.go:84-141) with t.clock.Now() given as now.
func (b *mnBucket) take(t *testing.T, minTokens, maxTokens int64, now time.Time) (int64, time.Duration, error) {
	t.Helper()
	state := b.state(t) // :100
	if state.isZero() { // :105-108
		state.Available = b.capacity
	}
	n := now.UnixNano()                                   // :110
	tokensToAdd := (n - state.Last) / int64(b.refillRate) // :112
	partialTime := (n - state.Last) % int64(b.refillRate) // :114
	if tokensToAdd > 0 {                                  // :115-123
		if tokensToAdd+state.Available < b.capacity {
			state.Available += tokensToAdd
			state.Last = n - partialTime
		} else {
			state.Available = b.capacity
			state.Last = n
		}
	}
	if minTokens > state.Available { // :125-127
		return 0, b.refillRate * time.Duration(minTokens-state.Available), errMNLimitExhausted
	}
	tokens := min(maxTokens, state.Available) // :130
	state.Available -= tokens                 // :133
	if err := b.setState(t, state); err != nil {
		return 0, 0, err // :135-138
	}
	return tokens, 0, nil
}

// limit is Take (tokenbucket.go:158-162): takeMinMax(tokens, tokens).
func (b *mnBucket) limit(t *testing.T, tokens int64, now time.Time) (time.Duration, error) {
	_, d, err := b.take(t, tokens, tokens, now)
	return d, err
}

// mnItem is the document State and SetState read and write (tokenbucket.go:589-592, 634-637).
type mnItem struct {
	State   mnState `json:"state"`
	Version int64   `json:"version"`
}

// state is State (tokenbucket.go:556-621), its goroutine and select left out.
func (b *mnBucket) state(t *testing.T) mnState {
	t.Helper()
	ctx := context.Background()
	if b.legacy {
		return b.oldState(t)
	}
	if b.raceCheck { // :564-567
		b.lastVersion = 0
	}
	value, err := b.rdb.Get(ctx, mnKey(b.prefix, "state")).Result() // :572-574
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	if errors.Is(err, redis.Nil) { // :581-586
		return b.oldState(t)
	}
	var item mnItem
	if err := json.Unmarshal([]byte(value), &item); err != nil { // :594-599
		t.Fatalf("mennanov/limiters fails to read %q: %v", value, err)
	}
	if b.raceCheck { // :602-604
		b.lastVersion = item.Version
	}
	return item.State
}

// oldState is the legacy two-key read (tokenbucket.go:479-553), and v1.13.0's State
// (v1.13.0:397-459), line for line the same.
func (b *mnBucket) oldState(t *testing.T) mnState {
	t.Helper()
	if b.raceCheck { // :487-490
		b.lastVersion = 0
	}
	keys := []string{mnKey(b.prefix, "last"), mnKey(b.prefix, "available")} // :495-498
	if b.raceCheck {
		keys = append(keys, mnKey(b.prefix, "version")) // :499-501
	}
	values, err := b.rdb.MGet(context.Background(), keys...).Result() // :503
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values { // :517-530
		if v == nil {
			return mnState{}
		}
	}
	last, err1 := strconv.ParseInt(values[0].(string), 10, 64)      // :532
	available, err2 := strconv.ParseInt(values[1].(string), 10, 64) // :537
	if err1 != nil || err2 != nil {
		t.Fatalf("mennanov/limiters fails to read %v", values)
	}
	if b.raceCheck { // :542-547
		if b.lastVersion, err = strconv.ParseInt(values[2].(string), 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	return mnState{Last: last, Available: available}
}

// setState is SetState (tokenbucket.go:624-700), its goroutine and select left out.
func (b *mnBucket) setState(t *testing.T, state mnState) error {
	t.Helper()
	if b.legacy {
		return b.setStateV1(t, state)
	}
	ctx := context.Background()
	key := mnKey(b.prefix, "state")                                              // :633
	value, err := json.Marshal(mnItem{State: state, Version: b.lastVersion + 1}) // :634-642
	if err != nil {
		t.Fatal(err)
	}
	if !b.raceCheck { // :649-653
		if err := b.rdb.Set(ctx, key, value, b.ttl).Err(); err != nil {
			t.Fatal(err)
		}
		return nil
	}
	callScript := `redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[3])` // :655-658
	if b.ttl == 0 {
		callScript = `redis.call('set', KEYS[1], ARGV[1])`
	}
	script := fmt.Sprintf(`
			local current = redis.call('get', KEYS[1])
			if current then
				local data = cjson.decode(current)
				if data.version > tonumber(ARGV[2]) then
					return 'RACE_CONDITION'
				end
			end
			%s
			return 'OK'
		`, callScript) // :660-670
	result, err := b.rdb.Eval(ctx, script, []string{key}, value, b.lastVersion, int64(b.ttl/time.Millisecond)).Result() // :672
	if err != nil {
		t.Fatal(err)
	}
	if result == "RACE_CONDITION" { // :679-683
		return errMNRaceCondition
	}
	return nil
}

// setStateV1 is v1.13.0's SetState (v1.13.0:462-513), its goroutine and select left out,
// and checkResponseFromRedis (v1.13.0 leakybucket.go:367-376).
func (b *mnBucket) setStateV1(t *testing.T, state mnState) error {
	t.Helper()
	ctx := context.Background()
	if !b.raceCheck { // :467-475
		_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			if err := p.Set(ctx, mnKey(b.prefix, "last"), state.Last, b.ttl).Err(); err != nil {
				return err
			}
			return p.Set(ctx, mnKey(b.prefix, "available"), state.Available, b.ttl).Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		return nil
	}
	result, err := b.rdb.Eval(ctx, `
	local version = tonumber(redis.call('get', KEYS[1])) or 0
	if version > tonumber(ARGV[1]) then
		return 'RACE_CONDITION'
	end
	return {
		redis.call('incr', KEYS[1]),
		redis.call('pexpire', KEYS[1], ARGV[4]),
		redis.call('set', KEYS[2], ARGV[2], 'PX', ARGV[4]),
		redis.call('set', KEYS[3], ARGV[3], 'PX', ARGV[4]),
	}
	`, []string{mnKey(b.prefix, "version"), mnKey(b.prefix, "last"), mnKey(b.prefix, "available")},
		b.lastVersion, state.Last, state.Available, int64(b.ttl/time.Millisecond)).Result() // :478-498
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := result.(string); ok && s == "RACE_CONDITION" { // leakybucket.go:368-370
		return errMNRaceCondition
	}
	want := []any{b.lastVersion + 1, int64(1), "OK", "OK"} // :501, leakybucket.go:371-373
	if fmt.Sprint(result) != fmt.Sprint(want) && fmt.Sprint(result) != fmt.Sprint([]any{int64(1), int64(1), "OK", "OK"}) {
		t.Fatalf("got %+v from redis, expected %+v", result, want)
	}
	return nil
}

// reset is Reset (tokenbucket.go:703-710): the zero state.
func (b *mnBucket) reset(t *testing.T) error { return b.setState(t, mnState{}) }

// mnKeys are all the keys of the library's bucket under prefix, either form.
func mnKeys(prefix string) []string {
	return []string{mnKey(prefix, "state"), mnKey(prefix, "available"), mnKey(prefix, "last"), mnKey(prefix, "version")}
}

// mnSpec is a rule's spec for NewTokenBucket(capacity, refillRate): one token per refillRate.
func mnSpec(capacity int64, refillRate time.Duration) bucket.Spec {
	return bucket.Spec{Capacity: float64(capacity), Rate: float64(time.Second) / float64(refillRate)}
}

// mnRates are refill intervals, whole µs and not (1/3 s), short and long.
var mnRates = []time.Duration{time.Second / 3, 250 * time.Millisecond, time.Second, 7 * time.Second, time.Minute / 7, time.Hour}

// TestMennanovOracle: buckets the library writes full, partly drained, empty and as its own
// Reset leaves them, at client clocks 40 ms ahead and behind the server's, with and without
// its race check and TTL, read by bucketctl with the layout declared and decided by both at
// the instant of the read: allowed alike, the library's reply (refillRate × deficit) alike,
// and bucketctl's true wait the first µs at which the library allows.
func TestMennanovOracle(t *testing.T) { mnOracle(t, false) }

// TestMennanovLegacyOracle: the same for the two-key form of v1.13.0 and before.
func TestMennanovLegacyOracle(t *testing.T) { mnOracle(t, true) }

// mnForm is the preset of the JSON form or of the two-key one, and its key's suffix.
func mnForm(legacy bool) (bucket.Layout, string) {
	if legacy {
		return bucket.Presets["mennanov-legacy"], "available"
	}
	return bucket.Presets["mennanov"], "state"
}

func mnOracle(t *testing.T, legacy bool) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rng := seed(t)
	l, name := mnForm(legacy)
	kinds := []string{"full", "drained", "empty", "zero"}
	var denied, ahead, expiry int
	for i := range 96 {
		kind, skew := kinds[i%4], []time.Duration{0, 40 * time.Millisecond, -40 * time.Millisecond}[i/4%3]
		capacity, rate := int64(1+rng.IntN(12)), mnRates[rng.IntN(len(mnRates))]
		prefix := fmt.Sprintf("mn:%d", i)
		key := mnKey(prefix, name)
		ttl := []time.Duration{0, 10 * time.Minute}[i%2]
		mk := func() *mnBucket {
			// v1.13.0's race check with no TTL deletes its version (PEXPIRE 0): not a setting.
			return &mnBucket{legacy: legacy, rdb: rdb, prefix: prefix, ttl: ttl, raceCheck: i/2%2 == 0 && (ttl > 0 || !legacy),
				refillRate: rate, capacity: capacity}
		}
		writer := mk()
		// full: drained a refill to full ago; zero: the library's own Reset after a take.
		takes := map[string]int64{"full": capacity, "drained": 1 + rng.Int64N(capacity), "empty": capacity, "zero": 1}[kind]
		back := map[string]time.Duration{"full": rate * time.Duration(capacity+1)}[kind]
		for range takes {
			if _, err := writer.limit(t, 1, serverNow(t, rdb).Add(skew-back)); err != nil {
				t.Fatalf("%s: take denied while draining: %v", key, err)
			}
		}
		if kind == "zero" {
			if err := writer.reset(t); err != nil {
				t.Fatal(err)
			}
		}
		spec := mnSpec(capacity, rate)
		for _, cost := range []int64{1, 2, capacity, capacity + 1} {
			keep := keepState(t, rdb, mnKeys(prefix))
			states, err := bucket.NewStore(rdb).Inspect(ctx, []string{key}, func(string) bucket.Target {
				return bucket.Target{Layout: &l, Spec: spec}
			})
			if err != nil || states[0].Problem != "" || !states[0].Exists {
				t.Fatalf("%s (%s, skew %s): %v %+v", key, kind, skew, err, states)
			}
			s := states[0]
			d := s.Decide(float64(cost))
			at := time.UnixMicro(s.Now)
			what := fmt.Sprintf("%s (%s, skew %s, cap %d per %v) cost %d", key, kind, skew, capacity, rate, cost)
			reply, err := mk().limit(t, cost, at)
			if d.Allowed != (err == nil) {
				t.Fatalf("%s: bucketctl allowed=%v (level %v), mennanov %v %v", what, d.Allowed, d.Remaining, reply, err)
			}
			keep()
			if s.Ahead > 0 {
				ahead++
			}
			if d.Allowed {
				continue
			}
			denied++
			if !d.AppReports || d.AppRetryAfter != reply {
				t.Fatalf("%s: app retry-after %v, mennanov replies %v", what, d.AppRetryAfter, reply)
			}
			if cost > capacity {
				if d.RetryAfter != -1 {
					t.Fatalf("%s: above capacity, retry-after %v", what, d.RetryAfter)
				}
				continue
			}
			if d.RetryByExpiry {
				expiry++
				// The key expires first (its TTL is the caller's): then the library reads none.
				rdb.Del(ctx, mnKeys(prefix)...)
			}
			if _, err := mk().limit(t, cost, at.Add(d.RetryAfter)); err != nil {
				t.Fatalf("%s: retry-after %v, mennanov still denies then: %v", what, d.RetryAfter, err)
			}
			keep()
			if _, err := mk().limit(t, cost, at.Add(d.RetryAfter-time.Microsecond)); err == nil {
				t.Fatalf("%s: retry-after %v, mennanov allows 1 µs before", what, d.RetryAfter)
			}
			keep()
		}
	}
	t.Logf("%d denied (%d until the key's expiry), %d read ahead of the server's clock", denied, expiry, ahead)
	if denied < 60 || ahead < 10 {
		t.Fatalf("the states are not covered: %d denied, %d ahead", denied, ahead)
	}
}

// TestMennanovOracleReset: after a reset to N (the layout declared) the library allows
// exactly N requests of 1, and after a reset to full its capacity; a decision the library
// read before the reset fails its race check rather than overwrite it; bucketctl reads N
// right after; a TTL the caller set is kept, and none is left none by a reset to full.
func TestMennanovOracleReset(t *testing.T) { mnOracleReset(t, false) }

// TestMennanovLegacyOracleReset: the same for the two-key form (its version counter).
func TestMennanovLegacyOracleReset(t *testing.T) { mnOracleReset(t, true) }

func mnOracleReset(t *testing.T, legacy bool) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	rng := seed(t)
	l, name := mnForm(legacy)
	st := bucket.NewStore(rdb)
	for i := range 24 {
		capacity, rate := int64(1+rng.IntN(12)), []time.Duration{10 * time.Second, time.Minute, time.Hour}[i%3]
		ttl := []time.Duration{0, 10 * time.Minute}[i%2]
		prefix := fmt.Sprintf("mn:reset:%d", i)
		key := mnKey(prefix, name)
		mk := func() *mnBucket {
			return &mnBucket{legacy: legacy, rdb: rdb, prefix: prefix, ttl: ttl, raceCheck: ttl > 0 || !legacy, refillRate: rate, capacity: capacity}
		}
		writer := mk()
		for range rng.Int64N(capacity + 2) {
			_, _ = writer.limit(t, 1, serverNow(t, rdb).Add([]time.Duration{0, 40 * time.Millisecond, -40 * time.Millisecond}[i%3]))
		}
		inflight := mk()
		state := inflight.state(t) // a decision under way: read before the reset, written after
		spec := mnSpec(capacity, rate)
		states, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: spec} })
		if err != nil || states[0].Problem != "" {
			t.Fatalf("%s: %v %+v", key, err, states)
		}
		n := rng.Int64N(capacity + 1)
		to := bucket.ResetTo{Tokens: float64(n)}
		if i%4 == 3 {
			to, n = bucket.ResetTo{Delete: true}, capacity
		}
		op := bucket.ResetOp{Key: key, Layout: l, Spec: spec, To: to, Read: &states[0], Declared: true}
		out, err := st.ResetMany(ctx, []bucket.ResetOp{op})
		if err != nil || (out[0] != bucket.ResetDone && out[0] != bucket.ResetCreated && !(to.Delete && out[0] == bucket.ResetMissing)) {
			t.Fatalf("%s: reset to %+v: %v %v", key, to, out, err)
		}
		if states[0].Exists && inflight.raceCheck {
			if err := inflight.setState(t, state); !errors.Is(err, errMNRaceCondition) {
				t.Fatalf("%s: a write read before the reset: %v, want the race check to refuse it", key, err)
			}
		}
		pttl := rdb.PTTL(ctx, key).Val()
		switch {
		case !states[0].Exists:
		case to.Delete && ttl == 0 && pttl != -1:
			t.Fatalf("%s: a reset to full of a key without a TTL left PTTL %v", key, pttl)
		case ttl > 0 && pttl < ttl-time.Minute:
			t.Fatalf("%s: the caller's TTL %v became %v", key, ttl, pttl)
		case !to.Delete && pttl < time.Duration(capacity-n)*rate:
			t.Fatalf("%s: reset to %d: PTTL %v is shorter than the refill", key, n, pttl)
		}
		after, err := st.Inspect(ctx, []string{key}, func(string) bucket.Target { return bucket.Target{Layout: &l, Spec: spec} })
		if err != nil || after[0].Problem != "" || after[0].Tokens != float64(n) {
			t.Fatalf("%s: after a reset to %d bucketctl reads %+v (%v)", key, n, after, err)
		}
		got := int64(0)
		for ; got <= capacity; got++ {
			if _, err := mk().limit(t, 1, serverNow(t, rdb)); err != nil {
				break
			}
		}
		if got != n {
			v, _ := rdb.Get(ctx, key).Result()
			t.Fatalf("%s: after a reset to %d (%q) mennanov allowed %d", key, n, v, got)
		}
	}
}

// TestMennanovIdentity: undeclared, a state at {PREFIX}state (or the two-key form) is read
// as a guess and a reset refuses it; the same value under another name is no bucket; declared, a
// value not in the library's form is no bucket and is left as it is.
func TestMennanovIdentity(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	l := bucket.Presets["mennanov"]
	st := bucket.NewStore(rdb)
	ns := serverNow(t, rdb).UnixNano()
	v := fmt.Sprintf(`{"state":{"Last":%d,"Available":3},"version":7}`, ns)
	for k, val := range map[string]string{"{api:7}state": v, "app:7": v, "{api:8}state": `{"state":{"Last":1,"Available":3},"version":7,"x":1}`} {
		if err := rdb.Set(ctx, k, val, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := st.Inspect(ctx, []string{"{api:7}state", "app:7", "{api:8}state"}, func(string) bucket.Target { return bucket.Target{} })
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Layout.Name != "mennanov" || !s[0].Detected || s[0].Guess == "" || s[0].Stored.Tokens != 3 || s[0].Problem != "" {
		t.Fatalf("{api:7}state: %+v, want a mennanov guess at 3 tokens", s[0])
	}
	if s[1].Problem == "" || s[2].Problem == "" {
		t.Fatalf("a state under another name, or not in the library's form, read as a bucket: %+v / %+v", s[1], s[2])
	}
	legacy := bucket.Presets["mennanov-legacy"]
	rdb.Set(ctx, "{api:9}available", "3", time.Minute)
	rdb.Set(ctx, "{api:9}last", strconv.FormatInt(ns, 10), time.Minute)
	if g, err := st.Inspect(ctx, []string{"{api:9}available"}, func(string) bucket.Target { return bucket.Target{} }); err != nil ||
		g[0].Layout.Name != legacy.Name || g[0].Guess == "" || g[0].Stored.Tokens != 3 {
		t.Fatalf("{api:9}available: %+v (%v), want a mennanov-legacy guess at 3 tokens", g, err)
	}
	if out, _ := st.ResetMany(ctx, []bucket.ResetOp{{Key: "{api:9}available", Layout: legacy, To: bucket.ResetTo{Delete: true}}}); out[0] != bucket.ResetUndeclared {
		t.Fatalf("undeclared reset of the two-key form: %v", out)
	}
	out, _ := st.ResetMany(ctx, []bucket.ResetOp{{Key: "{api:7}state", Layout: l, To: bucket.ResetTo{Delete: true}}})
	declared, err := st.Inspect(ctx, []string{"{api:8}state"}, func(string) bucket.Target { return bucket.Target{Layout: &l} })
	if out[0] != bucket.ResetUndeclared || err != nil || declared[0].Problem == "" {
		t.Fatalf("undeclared reset: %v; declared read of another form: %+v (%v)", out, declared, err)
	}
	out, _ = st.ResetMany(ctx, []bucket.ResetOp{{Key: "{api:8}state", Layout: l, To: bucket.ResetTo{Delete: true}, Declared: true}})
	if got := rdb.Get(ctx, "{api:7}state").Val(); out[0] != bucket.ResetChanged || got != v {
		t.Fatalf("reset of another form: %v; the undeclared state now %q", out, got)
	}
	_, err = st.ResetMany(ctx, []bucket.ResetOp{{Key: "{api:7}state", Layout: l, Spec: bucket.Spec{Capacity: 5, Rate: 1}, To: bucket.ResetTo{Tokens: 1.5}, Declared: true}})
	if !errors.Is(err, bucket.ErrInvalid) || rdb.Get(ctx, "{api:7}state").Val() != v {
		t.Fatalf("reset to 1.5 tokens: %v", err)
	}
}
