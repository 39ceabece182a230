package bucket_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// checkCoalescedExact runs 32 goroutines on 8 keys through a one-lane Store (so decisions
// queue and share round trips), each key with its own capacity and cost and no refill
// to speak of. Every key must allow exactly floor(capacity/cost) decisions, and the
// remaining tokens of its allowed decisions must be capacity-cost, capacity-2·cost, ...,
// each once: every reply reached the caller whose decision it was.
func checkCoalescedExact(t *testing.T, rdb bucket.Client, keys []string) {
	t.Helper()
	ctr := &evalCounter{}
	rdb.AddHook(beforeSend(ctr.count))
	st := bucket.NewStore(rdb, bucket.WithCoalescing(1))
	ctx := context.Background()
	if _, _, err := st.LoadScript(ctx); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		mu        sync.Mutex
		remaining []float64
		denied    int
	}
	out := make([]outcome, len(keys))
	specOf := func(i int) (bucket.Spec, float64) {
		return bucket.Spec{Capacity: float64(5 + i), Rate: 1e-6}, float64(1 + i%2)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32*20)
	for g := range 32 {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sp, cost := specOf(i)
			for range 20 {
				r, err := st.Take(ctx, keys[i], sp, cost)
				if err != nil {
					errs <- err
					return
				}
				if r.Spec != sp {
					errs <- fmt.Errorf("%s: result carries spec %+v, want %+v", keys[i], r.Spec, sp)
				}
				out[i].mu.Lock()
				if r.Allowed {
					out[i].remaining = append(out[i].remaining, r.Remaining)
				} else {
					out[i].denied++
				}
				out[i].mu.Unlock()
			}
		}(g % len(keys))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, k := range keys {
		sp, cost := specOf(i)
		n := int(sp.Capacity / cost)
		got := out[i].remaining
		sort.Sort(sort.Reverse(sort.Float64Slice(got)))
		if len(got) != n || out[i].denied != 80-n {
			t.Fatalf("%s (capacity %v, cost %v): %d allowed and %d denied of 80, want %d allowed", k, sp.Capacity, cost, len(got), out[i].denied, n)
		}
		for j, rem := range got {
			// Refill at 1e-6 tokens/s adds far less than 0.01 in the test's run time.
			if want := sp.Capacity - float64(j+1)*cost; math.Abs(rem-want) > 0.01 {
				t.Fatalf("%s: allowed decisions left %v tokens, want %v, %v, ... each once", k, got, sp.Capacity-cost, sp.Capacity-2*cost)
			}
		}
	}
	if d, rt := ctr.decisions.Load(), ctr.trips.Load(); d <= rt {
		t.Fatalf("%d decisions in %d round trips: 32 goroutines on one lane shared no round trip", d, rt)
	} else {
		t.Logf("%d decisions in %d round trips", d, rt)
	}
}

func TestCoalescedDecisionsExact(t *testing.T) {
	srv := redistest.Start(t)
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = fmt.Sprint("co:", i)
	}
	checkCoalescedExact(t, srv.Client(t), keys)
}

// TestCoalescedCluster: a coalesced batch holds keys of every master; the ClusterClient
// splits it per node, and every caller still gets its own decision.
func TestCoalescedCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = cl.KeyOnMaster(i%3, fmt.Sprint("co", i, ":"))
	}
	checkCoalescedExact(t, cl.Client(t), keys)
}

// TestCoalescedAfterScriptFlush: queued decisions of both writing scripts (Take and
// TakeAll) meet NOSCRIPT after SCRIPT FLUSH. They did not run: each script is loaded and
// they are sent again once, and each is applied exactly once.
func TestCoalescedAfterScriptFlush(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c, bucket.WithCoalescing(1))
	ctx := context.Background()
	c.ScriptFlush(ctx)
	tiers := []bucket.Tier{
		{Name: "user", Key: "rl:{u}:user", Spec: spec(5, 1e-6), Cost: 1},
		{Name: "global", Key: "rl:{u}:global", Spec: spec(100, 1e-6), Cost: 1},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	takes, all := 0, 0
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ok bool
			if i%2 == 0 {
				r, err := st.Take(ctx, "k", spec(10, 1e-6), 1)
				if err != nil {
					t.Error(err)
					return
				}
				ok = r.Allowed
			} else {
				r, err := st.TakeAll(ctx, tiers)
				if err != nil {
					t.Error(err)
					return
				}
				ok = r.Allowed
			}
			mu.Lock()
			defer mu.Unlock()
			if ok && i%2 == 0 {
				takes++
			} else if ok {
				all++
			}
		}()
	}
	wg.Wait()
	if takes != 10 || all != 5 {
		t.Fatalf("allowed %d of 16 Takes (capacity 10) and %d of 16 TakeAlls (user tier capacity 5), want 10 and 5", takes, all)
	}
	if n := nativeOf(t, c, "k"); n.Allowed != 10 || n.Denied != 6 {
		t.Fatalf("counters allowed=%v denied=%v: want 10 and 6, each decision applied once", n.Allowed, n.Denied)
	}
	// Refill at 1e-6 tokens/s adds far less than 0.01 in the test's run time.
	if g := nativeOf(t, c, "rl:{u}:global").Tokens; math.Abs(g-95) > 0.01 {
		t.Fatalf("the global tier holds %v tokens, want 95: 5 allowed decisions, each applied once", g)
	}
}

// TestLoneTakeGoesAlone: without concurrency a Take is one EVALSHA in its own round trip,
// never a pipeline, and never waits.
func TestLoneTakeGoesAlone(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	st := bucket.NewStore(c)
	ctx := context.Background()
	if _, _, err := st.LoadScript(ctx); err != nil {
		t.Fatal(err)
	}
	ctr := &redistest.Counter{}
	c.AddHook(ctr)
	for range 20 {
		if _, err := st.Take(ctx, "lone", spec(100, 1), 1); err != nil {
			t.Fatal(err)
		}
	}
	if cmds, rt := ctr.Commands.Load(), ctr.RoundTrips.Load(); cmds != 20 || rt != 20 {
		t.Fatalf("20 sequential Takes made %d commands in %d round trips, want 20 in 20", cmds, rt)
	}
}

// gate holds the first EVALSHA of chosen keys, single or pipelined, before it leaves, until
// the test opens the gate: a test can keep a decision in flight as long as it needs.
type gate struct {
	mu   sync.Mutex
	keys map[string]*gateKey
}

type gateKey struct {
	sent chan struct{} // closed when the command reached the hook
	open chan struct{} // close to let it go
	held bool
}

func newGate(keys ...string) *gate {
	g := &gate{keys: map[string]*gateKey{}}
	for _, k := range keys {
		g.keys[k] = &gateKey{sent: make(chan struct{}), open: make(chan struct{})}
	}
	return g
}

func (g *gate) hold(cmds []redis.Cmder) {
	for _, c := range cmds {
		a := c.Args()
		if len(a) < 4 || !strings.EqualFold(fmt.Sprint(a[0]), "evalsha") {
			continue
		}
		g.mu.Lock()
		k, ok := g.keys[fmt.Sprint(a[3])]
		if ok && k.held {
			ok = false // each key is held once
		} else if ok {
			k.held = true
		}
		g.mu.Unlock()
		if ok {
			close(k.sent)
			<-k.open
			return
		}
	}
}

// beforeSend is a go-redis hook that calls its function with the commands of each round
// trip (one command, or a pipeline's) before they leave.
type beforeSend func(cmds []redis.Cmder)

func (f beforeSend) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f beforeSend) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}
func (f beforeSend) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		f(cmds)
		return next(ctx, cmds)
	}
}

// TestCoalescedCancel: a Take whose context ends while it is queued was never sent and
// says so (nothing applied); one whose context ends after its batch left gets an
// UncertainError, and the server does apply it.
func TestCoalescedCancel(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	st := bucket.NewStore(c, bucket.WithCoalescing(1))
	if _, _, err := st.LoadScript(ctx); err != nil {
		t.Fatal(err)
	}
	g := newGate("a", "b")
	c.AddHook(beforeSend(g.hold))
	sp := spec(10, 1e-6)

	// a holds the only lane, in flight.
	aDone := make(chan error, 1)
	go func() { _, err := st.Take(ctx, "a", sp, 1); aDone <- err }()
	<-g.keys["a"].sent

	// q queues behind it and gives up: never sent.
	qctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err := st.Take(qctx, "q", sp, 1)
	cancel()
	var ue *bucket.UncertainError
	if !errors.Is(err, bucket.ErrNotSent) || !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ue) {
		t.Fatalf("queued Take after its deadline: %v, want ErrNotSent with the deadline", err)
	}
	qctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = st.TakeAll(qctx, []bucket.Tier{{Key: "q", Spec: sp, Cost: 1}})
	cancel()
	if !errors.Is(err, bucket.ErrNotSent) || errors.As(err, &ue) {
		t.Fatalf("queued TakeAll after its deadline: %v, want ErrNotSent", err)
	}

	// b queues too; the lane sends it once a is answered; its caller gives up while
	// the batch is in flight.
	bctx, bcancel := context.WithCancel(ctx)
	bDone := make(chan error, 1)
	go func() { _, err := st.Take(bctx, "b", sp, 1); bDone <- err }()
	redistest.WaitFor(t, 10*time.Second, "b to queue", func() bool { return bucket.Queued(st) == 1 })
	close(g.keys["a"].open)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	<-g.keys["b"].sent
	bcancel()
	if err := <-bDone; !errors.As(err, &ue) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Take cancelled after it was sent: %v, want an UncertainError", err)
	}
	close(g.keys["b"].open)

	// The lane still reads b's reply: b is applied, q is not.
	redistest.WaitFor(t, 10*time.Second, "b's decision, sent before its caller gave up, to be applied", func() bool {
		v, _ := bucket.DecodeNative(c.Get(ctx, "b").Val())
		return v.Allowed == 1
	})
	if n := c.Exists(ctx, "q").Val(); n != 0 {
		t.Fatal("the Take that was never sent wrote its bucket")
	}
	if v := nativeOf(t, c, "a").Allowed; v != 1 {
		t.Fatalf("a applied %v times, want once", v)
	}
	// The Store still works: the lane released itself.
	if r, err := st.Take(ctx, "q", sp, 1); err != nil || !r.Allowed {
		t.Fatalf("Take after the cancellations: %+v %v", r, err)
	}
}

// TestCoalescedServerDies: the server is killed while one decision holds the lane (not yet
// written) and two wait behind it. None of them can leave: go-redis finds the pooled
// connection dead and the new one is refused. Each caller gets that refusal, naming the
// address, and not an UncertainError, which is for decisions that left. After a restart
// (scripts gone: NOSCRIPT) the Store decides again.
func TestCoalescedServerDies(t *testing.T) {
	srv := redistest.Start(t)
	_, st := oneLaneStore(t, srv, 2*time.Second, nil)
	open, errs := aSentBAndCQueued(t, st)
	srv.Kill()
	open()
	for range 3 {
		err := <-errs
		var ue *bucket.UncertainError
		if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), srv.Addr()) {
			t.Fatalf("decision against a killed server: %v, want the refused connection to %s", err, srv.Addr())
		}
	}
	srv.Restart(t)
	if r, err := st.Take(context.Background(), "a", spec(10, 1), 1); err != nil || !r.Allowed {
		t.Fatalf("Take after the restart: %+v %v", r, err)
	}
}

// TestCoalescedNoReply: the server takes the decisions in but does not answer (CLIENT
// PAUSE WRITE holds every script call), so the client's read timeout fires: first on a
// decision in flight alone, then on the batch of the two that queued behind it. All three
// were sent, so all three report an UncertainError, and none is sent again.
func TestCoalescedNoReply(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	ctr := &evalCounter{}
	_, st := oneLaneStore(t, srv, 300*time.Millisecond, beforeSend(ctr.count))
	if err := admin.Do(ctx, "client", "pause", 30000, "write").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "client", "unpause") })
	open, errs := aSentBAndCQueued(t, st)
	open()
	for range 3 {
		var ue *bucket.UncertainError
		if err := <-errs; !errors.As(err, &ue) {
			t.Fatalf("a decision sent to a server that never answered: %v, want an UncertainError", err)
		}
	}
	if d, rt := ctr.decisions.Load(), ctr.trips.Load(); d != 3 || rt != 2 {
		t.Fatalf("%d decisions in %d round trips, want 3 in 2: a alone, then b and c together, none sent again", d, rt)
	}
	if err := admin.Do(ctx, "client", "unpause").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Take(ctx, "d", spec(10, 1), 1); err != nil {
		t.Fatalf("Take after the server answers again: %v", err)
	}
}

// evalCounter counts the decisions sent (an EVALSHA decides one per key: a batch of
// coalesced Takes is one EVALSHA over their keys) and the round trips that carried them;
// connection set-up (HELLO, CLIENT SETINFO) is not counted.
type evalCounter struct{ decisions, cmds, trips atomic.Int64 }

func (e *evalCounter) count(cmds []redis.Cmder) {
	n := 0
	for _, c := range cmds {
		if a := c.Args(); strings.EqualFold(fmt.Sprint(a[0]), "evalsha") {
			k, _ := a[2].(int)
			n += k
			e.cmds.Add(1)
		}
	}
	if n > 0 {
		e.decisions.Add(int64(n))
		e.trips.Add(1)
	}
}

// oneLaneStore returns a client of srv with the given read timeout and hook (nil: none), and
// a Store on it with one lane and its script loaded.
func oneLaneStore(t *testing.T, srv *redistest.Server, readTimeout time.Duration, hook redis.Hook) (*redis.Client, *bucket.Store) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, ReadTimeout: readTimeout})
	t.Cleanup(func() { c.Close() })
	if hook != nil {
		c.AddHook(hook)
	}
	st := bucket.NewStore(c, bucket.WithCoalescing(1))
	if _, _, err := st.LoadScript(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, st
}

// aSentBAndCQueued starts a Take on "a" and holds it, about to be sent, on the Store's only
// lane; then Takes on "b" and "c", which queue behind it. open lets "a" go; the three
// Takes' errors arrive on errs.
func aSentBAndCQueued(t *testing.T, st *bucket.Store) (open func(), errs <-chan error) {
	t.Helper()
	g := newGate("a")
	st.Redis().AddHook(beforeSend(g.hold))
	ch := make(chan error, 3)
	for _, k := range []string{"a", "b", "c"} {
		go func() { _, err := st.Take(context.Background(), k, spec(10, 1), 1); ch <- err }()
		if k == "a" {
			<-g.keys["a"].sent
		}
	}
	redistest.WaitFor(t, 10*time.Second, "b and c to queue", func() bool { return bucket.Queued(st) == 2 })
	return func() { close(g.keys["a"].open) }, ch
}

// TestCoalescedBatchRefusesOnlyItsKey: Takes queued behind one in flight go as one batch
// (one EVALSHA over their keys); a key in it that is not a native bucket (a lease held as a
// string, a hash of another application) is refused on its own and left untouched, while
// the buckets beside it are decided exactly, each with its own spec.
func TestCoalescedBatchRefusesOnlyItsKey(t *testing.T) {
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	if err := admin.Set(ctx, "lease", "1764090000", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.HSet(ctx, "session", "tokens", "3", "ts", "1", "user", "ann").Err(); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, k := range []string{"lease", "session"} {
		before[k] = admin.Dump(ctx, k).Val()
	}
	ctr := &evalCounter{}
	_, st := oneLaneStore(t, srv, 0, beforeSend(ctr.count))
	g := newGate("a")
	st.Redis().AddHook(beforeSend(g.hold))
	type outcome struct {
		key string
		r   bucket.Result
		err error
	}
	keys := []string{"a", "b", "lease", "c", "session", "b"}
	specs := map[string]bucket.Spec{"a": spec(10, 1), "b": spec(2, 1e-6), "c": spec(7, 1e-6), "lease": spec(5, 1), "session": spec(5, 1)}
	ch := make(chan outcome, len(keys))
	for i, k := range keys {
		go func() { r, err := st.Take(ctx, k, specs[k], 1); ch <- outcome{k, r, err} }()
		if i == 0 {
			<-g.keys["a"].sent
		} else {
			redistest.WaitFor(t, 10*time.Second, k+" to queue", func() bool { return bucket.Queued(st) == i })
		}
	}
	close(g.keys["a"].open)
	got := map[string][]outcome{}
	for range keys {
		o := <-ch
		got[o.key] = append(got[o.key], o)
	}
	for _, k := range []string{"lease", "session"} {
		if o := got[k][0]; !errors.Is(o.err, bucket.ErrWrongType) && !errors.Is(o.err, bucket.ErrForeign) {
			t.Errorf("%s in a batch: %+v, want an error wrapping ErrWrongType or ErrForeign", k, o)
		}
		if after := admin.Dump(ctx, k).Val(); after != before[k] {
			t.Errorf("%s changed by a batch that refused it", k)
		}
	}
	for _, k := range []string{"a", "c"} {
		if o := got[k][0]; o.err != nil || !o.r.Allowed || o.r.Remaining != specs[k].Capacity-1 {
			t.Errorf("%s: %+v, want allowed with %v left", k, o, specs[k].Capacity-1)
		}
	}
	// b twice in one batch: decided in order, the second sees the first's take.
	rem := []float64{got["b"][0].r.Remaining, got["b"][1].r.Remaining}
	sort.Float64s(rem)
	if got["b"][0].err != nil || got["b"][1].err != nil || math.Abs(rem[0]) > 1e-3 || math.Abs(rem[1]-1) > 1e-3 {
		t.Errorf("b taken twice from 2 tokens in one batch: %+v, want 1 then 0 left", got["b"])
	}
	if d, c, rt := ctr.decisions.Load(), ctr.cmds.Load(), ctr.trips.Load(); d != 6 || c != 2 || rt != 2 {
		t.Errorf("%d decisions in %d EVALSHAs and %d round trips, want 6 in 2 and 2: a alone, then the five queued in one batch", d, c, rt)
	}
}
