package bucket_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestRefusedWithDeadlineIsNotUncertain: a decision against a server that refuses
// connections, under a context deadline, was never written to a connection, so it is
// reported as unreachable and not as "may or may not have been applied".
func TestRefusedWithDeadlineIsNotUncertain(t *testing.T) {
	srv := redistest.Start(t)
	addr := srv.Addr()
	srv.Stop()
	for _, tc := range []struct {
		name string
		opts []bucket.Option
	}{{"coalescing", nil}, {"direct", []bucket.Option{bucket.WithCoalescing(0)}}} {
		t.Run(tc.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
			t.Cleanup(func() { c.Close() })
			st := bucket.NewStore(c, tc.opts...)
			ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
			defer cancel()
			_, err := st.Take(ctx, "k", bucket.Spec{Capacity: 10, Rate: 1}, 1)
			var ue *bucket.UncertainError
			if err == nil || errors.As(err, &ue) {
				t.Fatalf("Take against a refusing server under a deadline: %v, want an error that is not an UncertainError", err)
			}
			if !rediserr.IsUnreachable(err) || !(errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded)) {
				t.Fatalf("Take against a refusing server: %v, want connection refused or the deadline", err)
			}
		})
	}
}
