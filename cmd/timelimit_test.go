package cmd

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/connect"
)

// The time limit these tests give (--timeout) and the longest a one-key command may take
// with it: the limit plus a margin for a loaded machine, well under twice the limit.
const (
	limit     = time.Second
	limitArg  = "1s"
	limitWall = 1800 * time.Millisecond
)

// oneKeyVerbs are the commands that touch one key, each with what it needs.
var oneKeyVerbs = [][]string{
	{"inspect", "tl:k"},
	{"check", "tl:k", "--capacity", "10", "--rate", "1"},
	{"consume", "tl:k", "--capacity", "10", "--rate", "1"},
	{"reset", "tl:k", "--yes"},
}

// silentListener accepts TCP connections and never answers: a network failure (a hung
// host, a black-holing proxy), not a Redis.
func silentListener(t *testing.T) string { return hostileListener(t, "") }

// endsInTime runs fn and fails unless it ends, with exit 3 and one line, within limitWall.
func endsInTime(t *testing.T, what string, fn func() result) {
	t.Helper()
	start := time.Now()
	r := fn()
	took := time.Since(start)
	if took > limitWall {
		t.Errorf("%s: took %v with --timeout %v (want at most %v): exit %d %q", what, took.Round(time.Millisecond), limit, limitWall, r.code, r.errOut)
	}
	if r.code != ExitUnreachable || !strings.Contains(r.errOut, "timeout") && !strings.Contains(r.errOut, "timed out") {
		t.Errorf("%s: exit %d %q, want 3 and a line saying it timed out", what, r.code, r.errOut)
	}
	oneLine(t, r)
}

// TestTimeLimitSilentServer: against a server that accepts the connection and never
// answers, every one-key command ends within --timeout plus a small margin, for a URL, a
// Cluster seed and a sentinel: the handshake (HELLO) counts against the limit, and
// nothing waits for it twice.
func TestTimeLimitSilentServer(t *testing.T) {
	t.Parallel()
	addr := silentListener(t)
	forms := map[string][]string{
		"url":      {"--url", addr},
		"cluster":  {"--cluster", addr},
		"sentinel": {"--sentinel-master", "m", "--sentinel-addrs", addr},
	}
	for name, form := range forms {
		for _, verb := range oneKeyVerbs {
			t.Run(name+"/"+verb[0], func(t *testing.T) {
				t.Parallel()
				endsInTime(t, strings.Join(verb, " "), func() result {
					return run(t, "", append(append(append([]string{}, form...), "--timeout", limitArg), verb...)...)
				})
			})
		}
	}
}

// TestTimeLimitStalledServer: a real redis-server that stops answering, before the
// command connects and after it has, ends every one-key command within --timeout plus a
// small margin, not a multiple of it (a pipeline's second attempt, a fallback after the
// first request, a retry of the client's).
func TestTimeLimitStalledServer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	run(t, srv.URL(), "consume", "tl:k", "--capacity", "10", "--rate", "1")
	// One client per command, connected before the server stalls.
	clients := make([]bucket.Client, len(oneKeyVerbs))
	for i := range clients {
		clients[i] = dialTest(t, connect.Server{URL: srv.URL(), Timeout: limit, BoundByContext: true})
		if err := clients[i].Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	}
	awake := redistest.Stall(t, srv.Addr(), "2.5")
	defer awake()
	var wg sync.WaitGroup
	for i, verb := range oneKeyVerbs {
		wg.Add(2)
		go func() {
			defer wg.Done()
			endsInTime(t, "stalled before connecting: "+strings.Join(verb, " "), func() result {
				return run(t, srv.URL(), append([]string{"--timeout", limitArg}, verb...)...)
			})
		}()
		go func() {
			defer wg.Done()
			endsInTime(t, "stalled after connecting: "+strings.Join(verb, " "), func() result {
				return runConnected(t, clients[i], append([]string{"--url", srv.URL(), "--timeout", limitArg}, verb...)...)
			})
		}()
	}
	wg.Wait()
}

// TestTimeLimitStalledClusterMaster: a Cluster master that stops answering after the
// command connected ends each one-key command on one of its keys within --timeout plus
// the margin, not after the cluster client's own further attempts at the node.
func TestTimeLimitStalledClusterMaster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	seeds := strings.Join(cl.Addrs(), ",")
	k := cl.KeyOnMaster(2, "tl:")
	if r := run(t, "", "--cluster", seeds, "consume", k, "--capacity", "10", "--rate", "1"); r.code != ExitOK {
		t.Fatalf("consume: exit %d %q", r.code, r.errOut)
	}
	verbs := [][]string{{"inspect", k}, {"check", k}, {"consume", k}, {"reset", k, "--yes"}}
	clients := make([]bucket.Client, len(verbs))
	for i := range clients {
		clients[i] = dialTest(t, connect.Server{Cluster: cl.Addrs(), Timeout: limit, BoundByContext: true})
		// The slot map, and a connection to the key's master.
		if err := clients[i].Exists(context.Background(), k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	awake := redistest.Stall(t, cl.MasterAddrs()[2], "2.5")
	defer awake()
	var wg sync.WaitGroup
	for i, verb := range verbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			endsInTime(t, "a Cluster master stalled after connecting: "+strings.Join(verb, " "), func() result {
				return runConnected(t, clients[i], append([]string{"--cluster", seeds, "--timeout", limitArg}, verb...)...)
			})
		}()
	}
	wg.Wait()
}

// hostileListener answers the first command of every connection with reply (none when
// reply is ""), then says nothing more: a server, or something in the way, that declares
// a reply it never sends.
func hostileListener(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			if reply != "" {
				go func() {
					buf := make([]byte, 4096)
					if _, err := c.Read(buf); err == nil {
						_, _ = c.Write([]byte(reply))
					}
				}()
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// TestHostileReplySizeRefused: a reply whose header declares more than bucketctl ever
// reads (2,000,000 elements, a 100 MB string: go-redis would allocate for them before
// reading a byte, and 2^31 elements would take the machine's memory) ends every one-key
// command at once, exit 3, one line saying so, for a URL, a Cluster seed and a sentinel.
func TestHostileReplySizeRefused(t *testing.T) {
	t.Parallel()
	for name, reply := range map[string]string{"array": "*2000000\r\n", "string": "$100000000\r\n"} {
		addr := hostileListener(t, reply)
		for form, args := range map[string][]string{
			"url":      {"--url", addr},
			"cluster":  {"--cluster", addr},
			"sentinel": {"--sentinel-master", "m", "--sentinel-addrs", addr},
		} {
			t.Run(name+"/"+form, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				r := run(t, "", append(append(args, "--timeout", "5s"), "inspect", "k")...)
				if took := time.Since(start); took > 2500*time.Millisecond {
					t.Errorf("took %v with a reply that declares what it never sends (want it refused at once)", took.Round(time.Millisecond))
				}
				if r.code != ExitUnreachable || !strings.Contains(r.errOut, "refused a reply declaring") || !strings.Contains(r.errOut, addr) {
					t.Errorf("exit %d %q, want 3 naming %s and the refused reply", r.code, r.errOut, addr)
				}
				oneLine(t, r)
			})
		}
	}
}

// TestTimeLimitListHotHeldSubscribe: list --hot whose SUBSCRIBE is never confirmed ends
// within --timeout, as every command does, not when the server answers.
func TestTimeLimitListHotHeldSubscribe(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr())
	p.Arm(redistest.Rule{Match: "subscribe", Fault: redistest.Hold})
	endsInTime(t, "list --hot", func() result {
		return run(t, p.URL(), "--timeout", limitArg, "list", "--hot", "--for", "500ms", "-o", "json")
	})
}
