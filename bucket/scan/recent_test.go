package scan_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/scan"
)

// TestRecentMeetsEachKeyOnceThroughShrinks: a SCAN walk of 300 keys during which the
// keyspace's table grows and shrinks 40 times (6,000 other keys added, then deleted) returns
// keys twice, each within a few keys of its first time; a Recent of 100 keys, a third of the
// walk, lets each key through once.
func TestRecentMeetsEachKeyOnceThroughShrinks(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	const n, pad, cycles, window = 300, 6000, 40, 100
	if err := c.ConfigSet(ctx, "hz", "100").Err(); err != nil { // shrink within ~10 ms
		t.Fatal(err)
	}
	pipe := c.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprintf("m:%d", i), "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	// table waits for a table of size, or at most size with smaller.
	table := func(size int, smaller bool) {
		redistest.WaitFor(t, 10*time.Second, fmt.Sprintf("a table of %d", size), func() bool {
			st, _ := c.Do(ctx, "DEBUG", "HTSTATS", "0").Text()
			var got int
			if i := strings.Index(st, "table size: "); i >= 0 {
				fmt.Sscan(st[i+len("table size: "):], &got)
			}
			return !strings.Contains(st, "rehashing") && (got == size || smaller && got > 0 && got < size)
		})
	}
	var walked []string
	cursor, done := uint64(0), false
	walk := func() {
		keys, next, err := c.Scan(ctx, cursor, "m:*", 5).Result()
		if err != nil {
			t.Fatal(err)
		}
		walked, cursor, done = append(walked, keys...), next, next == 0
	}
	// Each cycle: a SCAN call in the grown table, the table shrunk, a SCAN call in it.
	for cycle := 0; !done; cycle++ {
		if cycle >= cycles {
			walk()
			continue
		}
		prefix := fmt.Sprintf("pad%d", cycle)
		if err := c.Do(ctx, "DEBUG", "POPULATE", pad, prefix).Err(); err != nil {
			t.Fatal(err)
		}
		table(8192, false)
		if walk(); done {
			break
		}
		pipe := c.Pipeline()
		for i := range pad {
			pipe.Unlink(ctx, fmt.Sprintf("%s:%d", prefix, i))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		table(1024, true)
		walk()
	}
	first, dups, far := map[string]int{}, 0, 0
	for i, k := range walked {
		if j, ok := first[k]; !ok {
			first[k] = i
		} else if dups++; i-j >= window {
			far++
		}
	}
	if len(first) != n || dups == 0 || far > 0 {
		t.Fatalf("%d distinct keys of %d, %d returned again, %d of them %d keys or more after their first time", len(first), n, dups, far, window)
	}
	r, once := scan.Recent{Size: window}, 0
	for _, k := range walked {
		if r.First(k) {
			once++
		}
	}
	if once != n {
		t.Fatalf("Recent let %d keys through, want %d (%d walked)", once, n, len(walked))
	}
}

// TestRecentForgetsAllButTheLastSize: a Recent remembers the last Size keys only (a key met
// Size keys ago is let through again), RecentKeys when Size is not set.
func TestRecentForgetsAllButTheLastSize(t *testing.T) {
	t.Parallel()
	r := scan.Recent{Size: 3}
	var got []bool
	for _, k := range []string{"a", "b", "a", "c", "d", "b", "a", "d"} {
		got = append(got, r.First(k))
	}
	if want := []bool{true, true, false, true, true, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("Recent{Size: 3} let through %v, want %v", got, want)
	}
	var d scan.Recent
	for i := range scan.RecentKeys + 1 {
		d.First(fmt.Sprint(i))
	}
	if !d.First("0") || d.First(fmt.Sprint(scan.RecentKeys)) || d.Size != scan.RecentKeys {
		t.Errorf("Recent{} remembers other than the last %d keys (Size %d)", scan.RecentKeys, d.Size)
	}
}
