package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestNotABucketSaysWhatItIs: consume and check on a key that is not a bucket say what the
// key is (the read's reason), in one line, exit 1, and leave it as it was. A user record is
// not "another application's bucket", nor a hash "another Redis type".
func TestNotABucketSaysWhatItIs(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	c.HSet(ctx, "rate:user:rec", "name", "alice", "email", "a@example.com")
	c.Set(ctx, "rate:user:str", "hello", 0)
	c.HSet(ctx, "rate:ip:1", "tokens", "3", "last_refill", "1700000000.5") // an express bucket
	c.HSet(ctx, "rate:user:nan", "tokens", "nan", "ts", "1", "capacity", "10", "rate", "1", "allowed", "1", "denied", "0")
	// A lock holding its deadline (Unix ns) with PXAT the same instant: what a throttled TAT
	// looks like, so it reads as one only by a guess.
	deadline := time.Now().Add(10 * time.Minute).Truncate(time.Millisecond)
	c.Do(ctx, "SET", "lock:order:7", deadline.UnixNano(), "PXAT", deadline.UnixMilli())
	before := map[string]string{}
	for _, k := range []string{"rate:user:rec", "rate:user:str", "rate:ip:1", "rate:user:nan", "lock:order:7"} {
		before[k] = c.Dump(ctx, k).Val()
	}
	for _, tc := range []struct{ cmd, key, want string }{
		{"consume", "rate:user:rec", `"rate:user:rec": not a bucket: a hash with fields email, name (left untouched)`},
		{"check", "rate:user:rec", `"rate:user:rec": not a bucket: a hash with fields email, name (left untouched)`},
		{"consume", "rate:user:str", `"rate:user:str": not a bucket: a string that is not a number (left untouched)`},
		{"check", "rate:user:str", `"rate:user:str": not a bucket: a string that is not a number (left untouched)`},
		// A guess is never called a bucket.
		{"consume", "rate:ip:1", `"rate:ip:1" is read as layout express only by a guess (its fields are also what an application's own hash may hold`},
		{"consume", "lock:order:7", `"lock:order:7" is read as layout throttled only by a guess (a bare number is also what deadlines`},
		// A native bucket's fields with a value out of the grammar: the value is named, not
		// the fields another layout lacks.
		{"check", "rate:user:nan", `"rate:user:nan": not a bucket: a hash that has the fields of a native-hash bucket, but field tokens is not a number`},
	} {
		r := run(t, srv.URL(), tc.cmd, tc.key, "--capacity", "5", "--rate", "1")
		if r.code != ExitError || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("%s %s: exit %d %q, want %d and %q", tc.cmd, tc.key, r.code, r.errOut, ExitError, tc.want)
			continue
		}
		oneLine(t, r)
	}
	for k, d := range before {
		if got := c.Dump(ctx, k).Val(); got != d {
			t.Errorf("%s changed", k)
		}
	}
}
