package scan_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// TestReadAheadHoldsNoPageItHandedOn: the live heap while an unlimited States hands on its
// 400th page of 400-byte keys (16 MB of names so far) is what it was at its first, so no
// page read ahead keeps the pages before it.
func TestReadAheadHoldsNoPageItHandedOn(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const n = 60000
	pad := strings.Repeat("k", 390)
	pipe := c.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprintf("%s:%06d", pad, i), "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var first, last uint64
	pages := 0
	_, err := scan.States(ctx, bucket.NewStore(c), scan.Options{Count: 100}, func([]bucket.State) error {
		switch pages++; pages {
		case 1:
			first = live()
		case 400:
			last = live()
		}
		return nil
	})
	if err != nil || pages < 500 {
		t.Fatalf("err %v after %d pages", err, pages)
	}
	if last > first+8<<20 {
		t.Fatalf("live heap %d MB at the first page, %d MB at the 400th", first>>20, last>>20)
	}
}
