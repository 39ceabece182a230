package hot_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/hot"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// sawCommands is a hook that records the names of the commands its client sends.
type sawCommands struct {
	mu    sync.Mutex
	names []string
}

func (h *sawCommands) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *sawCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		name := cmd.Name()
		if args := cmd.Args(); len(args) > 1 {
			name = fmt.Sprint(args[0], " ", args[1])
		}
		h.names = append(h.names, strings.ToLower(name))
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}
func (h *sawCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestTrackerClientsAreBuiltByNodeClient: the Tracker's two connections per master are
// built by Options.NodeClient (the connection package's constructor, which puts its hooks
// on them) from a copy of every option of the master's client (here some the field-by-field
// copy dropped: its pool's timeouts and a Limiter), in RESP2, one connection each, over the
// client's own dialer (the reply guard's place); and they follow writes.
func TestTrackerClientsAreBuiltByNodeClient(t *testing.T) {
	srv := redistest.Start(t)
	var dials atomic.Int64
	opt := srv.Options()
	opt.PoolTimeout, opt.ConnMaxIdleTime = 7*time.Second, 11*time.Minute
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	var (
		mu    sync.Mutex
		built []*redis.Options
	)
	saw := &sawCommands{}
	nodeClient := func(o *redis.Options) *redis.Client {
		mu.Lock()
		built = append(built, o)
		mu.Unlock()
		nc := redis.NewClient(o)
		nc.AddHook(saw)
		return nc
	}
	ctx := context.Background()
	tr, err := hot.Track(ctx, bucket.NewStore(c), hot.Options{Prefixes: []string{"nc:"}, NodeClient: nodeClient})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if len(built) != 2 {
		t.Fatalf("NodeClient built %d clients, want the 2 of the one master", len(built))
	}
	for _, o := range built {
		if o.Addr != srv.Addr() || o.Protocol != 2 || o.PoolSize != 1 || o.MaxRetries != -1 ||
			o.PoolTimeout != 7*time.Second || o.ConnMaxIdleTime != 11*time.Minute || o.Dialer == nil {
			t.Errorf("options %s protocol %d pool %d retries %d pool timeout %s idle %s dialer %v: want the master's, in RESP2, one connection, no retries",
				o.Addr, o.Protocol, o.PoolSize, o.MaxRetries, o.PoolTimeout, o.ConnMaxIdleTime, o.Dialer != nil)
		}
	}
	if dials.Load() < 2 {
		t.Errorf("%d dials through the master client's dialer, want the tracker's 2", dials.Load())
	}
	saw.mu.Lock()
	names := strings.Join(saw.names, " ")
	saw.mu.Unlock()
	if !strings.Contains(names, "client tracking") {
		t.Errorf("the NodeClient's hook saw %q, want CLIENT TRACKING among them", names)
	}
	for i := 0; i < 5; i++ {
		if err := c.Set(ctx, "nc:k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	redistest.WaitFor(t, 5*time.Second, "the write to nc:k to be seen", func() bool {
		top := tr.Top(1, nil)
		return len(top) == 1 && top[0].Key == "nc:k"
	})
}
