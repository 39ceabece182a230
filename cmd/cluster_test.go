package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// directClients returns a plain client per address, closed in t.Cleanup.
func directClients(t *testing.T, addrs []string) []*redis.Client {
	t.Helper()
	cs := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		cs[i] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
		t.Cleanup(func() { _ = cs[i].Close() })
	}
	return cs
}

// dialTest builds a client as bucketctl does (MaxRetries -1, NoRetry decisions) and checks
// it reaches the server.
func dialTest(t *testing.T, o connect.Server) bucket.Client {
	t.Helper()
	if o.DialTimeout == 0 {
		o.DialTimeout = 2 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	c, err := o.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("connect: %v", err)
	}
	return c
}

// runConnected runs bucketctl over a client connected before the run, so a test can stall
// the server between bucketctl's connection check and its command. Run closes c.
func runConnected(t *testing.T, c bucket.Client, args ...string) result {
	t.Helper()
	io, _, out, errOut := testStreams()
	f := newTestFactory(t, io, VersionInfo{Version: "test"})
	f.client = c
	code := Run(context.Background(), f, args)
	return result{code, out.String(), errOut.String()}
}

// hget reads one field of a bucket: of a native bucket's tagged string, its value by the
// field's name as the native-hash layout spelled it; of a hash, HGET's.
func hget(t *testing.T, c redis.Cmdable, key, field string) string {
	t.Helper()
	return nativeFields(t, c, key)[field]
}

// nativeFields reads a key as fields: a native bucket's values by their names (integers
// without a fraction, the rest shortest), or a hash's own fields.
func nativeFields(t *testing.T, c redis.Cmdable, key string) map[string]string {
	t.Helper()
	ctx := context.Background()
	switch c.Type(ctx, key).Val() {
	case "none": // (a HGETALL now could meet the string written since)
		return map[string]string{}
	case "string":
		n, problem := bucket.DecodeNative(c.Get(ctx, key).Val())
		if problem != "" {
			t.Fatalf("%s: %s", key, problem)
		}
		g := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
		return map[string]string{"tokens": g(n.Tokens), "ts": g(n.TS), "capacity": g(n.Capacity), "rate": g(n.Rate),
			"allowed": g(n.Allowed), "denied": g(n.Denied)}
	}
	v, err := c.HGetAll(ctx, key).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	return v
}

// TestClusterCommands drives the CLI against a 3-master Cluster with buckets on every
// master: consume, check, inspect, list and reset --match reach every master and nothing
// else; script load loads everywhere; NOSCRIPT, a stalled master and a moved slot are
// survived without applying a consume twice.
func TestClusterCommands(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	masters := cl.MasterAddrs()
	direct := directClients(t, masters)
	seeds := strings.Join(cl.Addrs(), ",")
	cli := func(args ...string) result {
		t.Helper()
		return run(t, "", append([]string{"--cluster", seeds}, args...)...)
	}

	// Three buckets on each master, and one key per master outside the pattern.
	owner := map[string]int{}
	var keys []string
	for i := range masters {
		for j := range 3 {
			k := cl.KeyOnMaster(i, fmt.Sprintf("rl:user:%d%d:", i, j))
			keys = append(keys, k)
			owner[k] = i
		}
	}
	others := map[string]int{}
	for i := range masters {
		others[cl.KeyOnMaster(i, "other:")] = i
	}
	for _, k := range append(slices.Sorted(maps.Keys(others)), keys...) {
		if r := cli("consume", k, "--capacity", "5", "--rate", "0.01", "--cost", "2"); r.code != ExitOK {
			t.Fatalf("consume %s: exit %d %q", k, r.code, r.errOut)
		}
	}
	for _, k := range keys {
		if got := hget(t, direct[owner[k]], k, "allowed"); got != "1" {
			t.Fatalf("%s on its master %s: allowed %q, want 1", k, masters[owner[k]], got)
		}
	}
	dumpOthers := func() string {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(others)) {
			fmt.Fprintf(&b, "%s=%s;", k, dumpKey(t, direct[others[k]], k))
		}
		return b.String()
	}
	othersBefore := dumpOthers()

	// check reads, never writes.
	k0 := keys[0]
	before := dumpKey(t, direct[owner[k0]], k0)
	if r := cli("check", k0, "--cost", "3"); r.code != ExitOK {
		t.Fatalf("check --cost 3: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if r := cli("check", k0, "--cost", "4"); r.code != ExitDenied {
		t.Fatalf("check --cost 4: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if dumpKey(t, direct[owner[k0]], k0) != before {
		t.Fatal("check changed the bucket")
	}

	// inspect: one key per master in one call; the node is the key's master.
	picked := []string{keys[0], keys[3], keys[6]}
	r := cli(append([]string{"inspect", "-o", "json"}, picked...)...)
	if r.code != ExitOK {
		t.Fatalf("inspect: exit %d %q", r.code, r.errOut)
	}
	var views []output.StateView
	if err := json.Unmarshal([]byte(r.out), &views); err != nil || len(views) != 3 {
		t.Fatalf("inspect -o json: %v %s", err, r.out)
	}
	for _, v := range views {
		if v.Allowed != 1 || v.Tokens == nil || *v.Tokens < 3 || *v.Tokens > 3.1 || v.Node != masters[owner[v.Key]] {
			t.Errorf("inspect %s: allowed %d tokens %v node %q (its master is %s)", v.Key, v.Allowed, v.Tokens, v.Node, masters[owner[v.Key]])
		}
	}
	r = cli(append([]string{"inspect", "-o", "wide"}, picked...)...)
	if r.code != ExitOK || !strings.Contains(strings.Split(r.out, "\n")[0], "NODE") {
		t.Fatalf("inspect -o wide: exit %d %q %q", r.code, r.out, r.errOut)
	}
	for _, k := range picked {
		if !strings.Contains(lineOf(r.out, k), masters[owner[k]]) {
			t.Errorf("inspect -o wide: the row of %s lacks its master %s:\n%s", k, masters[owner[k]], r.out)
		}
	}

	// list: exactly the pattern's buckets, from every master.
	r = cli("list", "--match", "rl:user:*", "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("list: exit %d %q", r.code, r.errOut)
	}
	if err := json.Unmarshal([]byte(r.out), &views); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, v := range views {
		listed = append(listed, v.Key)
		if v.Node != masters[owner[v.Key]] {
			t.Errorf("list: %s on node %q, its master is %s", v.Key, v.Node, masters[owner[v.Key]])
		}
	}
	// Rows stream in SCAN order, master by master in turn.
	if want := slices.Sorted(slices.Values(keys)); !slices.Equal(slices.Sorted(slices.Values(listed)), want) {
		t.Fatalf("list --match rl:user:* = %v, want %v", listed, want)
	}
	r = cli("list", "--match", "rl:user:*", "-o", "wide")
	for _, k := range keys {
		if !strings.Contains(lineOf(r.out, k), masters[owner[k]]) {
			t.Errorf("list -o wide: the row of %s lacks its master %s:\n%s", k, masters[owner[k]], r.out)
		}
	}

	// reset --match: a dry run touches nothing; then every bucket on every master is
	// refilled (written full), and the keys outside the pattern stay as they were.
	if r := cli("reset", "--match", "rl:user:*", "--dry-run"); r.code != ExitOK || strings.Count(r.out, "rl:user:") != len(keys) {
		t.Fatalf("reset --dry-run: exit %d %q %q", r.code, r.out, r.errOut)
	}
	for _, k := range keys {
		if direct[owner[k]].Exists(ctx, k).Val() != 1 {
			t.Fatalf("the dry run removed %s", k)
		}
	}
	r = cli("reset", "--match", "rl:user:*", "--yes", "-o", "json")
	var plan []output.ResetView
	if err := json.Unmarshal([]byte(r.out), &plan); r.code != ExitOK || err != nil || len(plan) != len(keys) {
		t.Fatalf("reset --match: exit %d %v %q %q", r.code, err, r.out, r.errOut)
	}
	assertFull(t, cl.Client(t), keys...)
	for _, k := range keys {
		if direct[owner[k]].Exists(ctx, k).Val() != 1 {
			t.Errorf("%s is not on master %s after reset", k, masters[owner[k]])
		}
	}
	if dumpOthers() != othersBefore {
		t.Fatal("reset --match touched keys outside the pattern")
	}

	// The read-only ACL on a Cluster: ACLs are per node, and go-redis also asks for CLUSTER
	// SLOTS (to route) and COMMAND (once per client; refused, it asks before each command).
	for _, a := range cl.Addrs() {
		d := redis.NewClient(&redis.Options{Addr: a})
		for _, line := range []string{"ops-ro >ro-pass " + aclReadOnly + " +cluster|slots +command", "ops-noslots >ns-pass " + aclReadOnly} {
			args := []any{"ACL", "SETUSER"}
			for _, f := range strings.Fields(line) {
				args = append(args, f)
			}
			if err := d.Do(ctx, args...).Err(); err != nil {
				t.Fatalf("ACL SETUSER on %s: %v", a, err)
			}
		}
		_ = d.Close()
	}
	setEnv(t, "BUCKETCTL_PASSWORD", "ro-pass")
	if r := cli("--user", "ops-ro", "list", "--match", "other:*", "-o", "json"); r.code != ExitOK || strings.Count(r.out, `"key"`) != len(others) {
		t.Fatalf("list as ops-ro: exit %d %q %q", r.code, r.out, r.errOut)
	}
	if r := cli("--user", "ops-ro", "consume", keys[0]); r.code != ExitError || !strings.Contains(r.errOut, "user ops-ro may not run evalsha") {
		t.Fatalf("consume as ops-ro: exit %d %q", r.code, r.errOut)
	}
	setEnv(t, "BUCKETCTL_PASSWORD", "ns-pass")
	if r := cli("--user", "ops-noslots", "inspect", keys[0]); r.code != ExitError || !strings.Contains(r.errOut, "user ops-noslots may not run cluster|slots") {
		t.Fatalf("inspect as a user without +cluster|slots: exit %d %q", r.code, r.errOut)
	}
	setEnv(t, "BUCKETCTL_PASSWORD", "")
	if dumpOthers() != othersBefore {
		t.Fatal("the read-only user changed a bucket")
	}

	// script load: on every master.
	r = cli("script", "load", "-o", "json")
	var loaded struct {
		SHA   string   `json:"sha"`
		Nodes []string `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.out), &loaded); r.code != ExitOK || err != nil {
		t.Fatalf("script load: exit %d %v %q", r.code, err, r.errOut)
	}
	if !slices.Equal(slices.Sorted(slices.Values(loaded.Nodes)), slices.Sorted(slices.Values(masters))) {
		t.Errorf("script load loaded on %v, the masters are %v", loaded.Nodes, masters)
	}
	for i, c := range direct {
		if ok, err := c.ScriptExists(ctx, loaded.SHA).Result(); err != nil || !ok[0] {
			t.Errorf("SCRIPT EXISTS on master %s: %v %v", masters[i], ok, err)
		}
	}

	// SCRIPT FLUSH on one master: the next consume there falls back to EVAL, once.
	k1 := keys[3]
	allowedBefore, _ := strconv.Atoi(hget(t, direct[1], k1, "allowed"))
	if err := direct[1].ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if r := cli("consume", k1, "--capacity", "5", "--rate", "0.01"); r.code != ExitOK {
		t.Fatalf("consume after SCRIPT FLUSH: exit %d %q", r.code, r.errOut)
	}
	if got := hget(t, direct[1], k1, "allowed"); got != strconv.Itoa(allowedBefore+1) {
		t.Fatalf("after SCRIPT FLUSH the allowed counter is %q, want %d (counted once)", got, allowedBefore+1)
	}

	// Two-key layouts: both keys are written at once, so they must share a slot.
	tagged := "{rl:web:1}"
	untagged := "rl:web:2"
	if redistest.KeySlot(untagged) == redistest.KeySlot(untagged+":last_time") {
		t.Fatal("the untagged keys share a slot: pick another name")
	}
	cc := cl.Client(t)
	for _, k := range []string{tagged, untagged} {
		if err := cc.Set(ctx, k, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := cc.Set(ctx, k+":last_time", "1700000000.5", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if r := cli("reset", tagged, "--layout", "webman", "--capacity", "10", "--rate", "1", "--tokens", "3", "--yes"); r.code != ExitOK {
		t.Fatalf("reset of a hash-tagged webman bucket: exit %d %q", r.code, r.errOut)
	}
	if v := cc.Get(ctx, tagged).Val(); v != "3" {
		t.Fatalf("%s after reset --tokens 3: %q", tagged, v)
	}
	r = cli("reset", untagged, "--layout", "webman", "--capacity", "10", "--rate", "1", "--tokens", "3", "--yes")
	if r.code != ExitError || !strings.Contains(r.errOut, "hash tag") || !strings.Contains(r.errOut, untagged+":last_time") {
		t.Fatalf("reset of an untagged two-key bucket: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
	if v := cc.Get(ctx, untagged).Val(); v != "1" {
		t.Fatalf("the refused reset wrote %s = %q", untagged, v)
	}
	// The pair key in another slot is read too (one more round trip), and never whole: a
	// huge value there is no bucket's time, not a reply to refuse.
	r = cli("inspect", untagged, "--layout", "webman", "--capacity", "10", "--rate", "1", "-o", "json")
	if r.code != ExitOK || !strings.Contains(r.out, `"layout": "webman"`) || strings.Contains(r.out, `"problem"`) {
		t.Fatalf("inspect of an untagged webman bucket: exit %d %q\n%s", r.code, r.errOut, r.out)
	}
	huge := "rl:web:4"
	if redistest.KeySlot(huge) == redistest.KeySlot(huge+":last_time") {
		t.Fatal("the huge pair's keys share a slot: pick another name")
	}
	cc.Set(ctx, huge, "1", 0)
	cc.Set(ctx, huge+":last_time", strings.Repeat("1", 65<<20), 0) // over the reply guard's 64 MiB
	r = cli("inspect", huge, "--layout", "webman", "--capacity", "10", "--rate", "1", "-o", "json")
	if r.code == ExitUnreachable || !strings.Contains(r.out, `"key": "rl:web:4"`) {
		t.Fatalf("inspect of a bucket whose time key holds 65 MiB: exit %d %q\n%s", r.code, r.errOut, r.out)
	}

	// A master that refuses writes (more replicas asked for than it has) is named in the
	// error line, not just the seeds: the operator knows which node to look at.
	refusing := keys[6] // on master 2
	if err := direct[2].ConfigSet(ctx, "min-replicas-to-write", "2").Err(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"consume", refusing, "--capacity", "5", "--rate", "0.01"}, {"reset", refusing, "--capacity", "5", "--rate", "0.01", "--tokens", "2", "--yes"}} {
		r := cli(args...)
		if r.code != ExitError || !strings.Contains(r.errOut, "NOREPLICAS") || !strings.Contains(r.errOut, "(master "+masters[2]+")") {
			t.Fatalf("%v on a master refusing writes: exit %d %q, want NOREPLICAS naming master %s", args, r.code, r.errOut, masters[2])
		}
		oneLine(t, r)
	}
	if err := direct[2].ConfigSet(ctx, "min-replicas-to-write", "0").Err(); err != nil {
		t.Fatal(err)
	}

	// load: the decision path under concurrency, one decision per call and pipelined.
	for _, pipeline := range []string{"1", "8"} {
		r := cli("load", "api", "--capacity", "10", "--rate", "10", "-c", "4", "--pipeline", pipeline, "-d", "1s", "-o", "json")
		var rep load.Report
		if err := json.Unmarshal([]byte(r.out), &rep); r.code != ExitOK || err != nil {
			t.Fatalf("load --pipeline %s: exit %d %v %q", pipeline, r.code, err, r.errOut)
		}
		if rep.Errors != 0 || rep.Allowed < 10 || rep.Allowed > rep.TheoreticalMax || rep.Denied == 0 {
			t.Fatalf("load --pipeline %s on a Cluster: allowed %d (max %d), denied %d, errors %d", pipeline, rep.Allowed, rep.TheoreticalMax, rep.Denied, rep.Errors)
		}
		if n := cc.Exists(ctx, rep.Key).Val(); n != 0 {
			t.Fatalf("load --pipeline %s left %s behind", pipeline, rep.Key)
		}
	}

	// A master stalls past --timeout mid-consume: exit 3, a line that says the outcome is
	// unknown, and the consume applied at most once. go-redis's cluster client would
	// otherwise send it again: up to 3 more attempts of 200 ms each plus backoff, the
	// last of which is answered once the master wakes, within 0.7 s.
	k2 := keys[6]
	c := dialTest(t, connect.Server{Cluster: cl.Addrs(), Timeout: 200 * time.Millisecond})
	if err := direct[2].Del(ctx, k2).Err(); err != nil { // a fresh bucket: its counter starts at 1
		t.Fatal(err)
	}
	if _, err := bucket.NewStore(c).Take(ctx, k2, bucket.Spec{Capacity: 100, Rate: 0.01}, 1); err != nil {
		t.Fatal(err)
	}
	awake := redistest.Stall(t, masters[2], "0.7")
	r = runConnected(t, c, "--cluster", seeds, "--timeout", "200ms", "consume", k2)
	awake()
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, "no reply") || !strings.Contains(r.errOut, "not re-sent") {
		t.Fatalf("consume on a stalled master: exit %d %q", r.code, r.errOut)
	}
	oneLine(t, r)
	// The consume was written before the read timed out: the master runs it once it wakes.
	// Wait for that copy; the command closed its client, so a re-sent copy was written
	// before: one more round trip to that master, then check that no second copy ran.
	redistest.WaitFor(t, 3*time.Second, "the timed-out consume to run once the master wakes", func() bool {
		return hget(t, direct[2], k2, "allowed") != "1"
	})
	if err := direct[2].Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := hget(t, direct[2], k2, "allowed"); got != "1" && got != "2" {
		t.Fatalf("after a timed-out consume the bucket counts %q allowed, want 1 or 2 (applied at most once)", got)
	}

	// A slot moved to another master: the client's slot map is stale, the old owner
	// answers MOVED (the script did not run), and the redirect is followed: applied once.
	testMovedSlot(t, cl, direct)
}

func lineOf(out, key string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, key+" ") {
			return l
		}
	}
	return ""
}
