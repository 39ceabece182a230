package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestInspectMissingKeyIsNoBucket: a key named on the command line that does not exist is
// not shown as a bucket: its row says "no such key" on stdout (JSON "exists": false), and
// inspect exits 6 after printing every key, with one line on stderr naming the missing
// keys, so a misspelt key does not pass for a full bucket. A --match scan sees only keys
// that exist: exit 0.
func TestInspectMissingKeyIsNoBucket(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	url := srv.URL()
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	r := run(t, url, "inspect", "rate:user:nokey")
	if r.code != ExitNoKey || !strings.Contains(r.out, "no such key") || strings.Contains(r.out, "full") {
		t.Fatalf("inspect of a missing key: exit %d out %q", r.code, r.out)
	}
	want := "bucketctl: no such key: \"rate:user:nokey\" (misspelt, or a bucket that expired full or was refilled by a reset that deletes: a bucket's key expires once it has refilled, and a missing bucket reads as full)\n"
	if r.errOut != want {
		t.Fatalf("stderr %q, want only %q", r.errOut, want)
	}
	r = run(t, url, "inspect", "rate:user:1", "rate:user:nokey", "rate:user:nokey2", "--capacity", "10", "--rate", "1")
	if r.code != ExitNoKey || strings.Count(r.out, "no such key") != 2 || !strings.Contains(r.out, "rate:user:1 ") ||
		r.errOut != "bucketctl: 2 keys do not exist: \"rate:user:nokey\", \"rate:user:nokey2\" (misspelt, or a bucket that expired full or was refilled by a reset that deletes: a bucket's key expires once it has refilled, and a missing bucket reads as full)\n" {
		t.Fatalf("inspect of a bucket and two missing keys: exit %d out %q stderr %q", r.code, r.out, r.errOut)
	}
	r = run(t, url, "inspect", "rate:user:nokey", "-o", "json")
	var v struct {
		Exists *bool `json:"exists"`
	}
	if err := json.Unmarshal([]byte(r.out), &v); r.code != ExitNoKey || err != nil || v.Exists == nil || *v.Exists {
		t.Fatalf("inspect -o json of a missing key: exit %d %v %q", r.code, err, r.out)
	}
	r = run(t, url, "inspect", "--match", "rate:user:*")
	if r.code != ExitOK || strings.Contains(r.errOut, "no such key") {
		t.Fatalf("inspect --match: exit %d stderr %q", r.code, r.errOut)
	}
}

// TestCheckMissingKey: check of a key that does not exist decides as the new, full bucket
// it would be, says "no such key" (JSON "exists": false) and exits 6; an existing bucket
// says "exists": true.
func TestCheckMissingKey(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	url := srv.URL()
	r := run(t, url, "check", "rate:user:nokey", "--capacity", "10", "--rate", "1")
	if r.code != ExitNoKey || !strings.Contains(r.out, "no such key (new and full: tokens 10/10)") || !strings.Contains(r.errOut, "no such key") {
		t.Fatalf("check of a missing key: exit %d out %q err %q", r.code, r.out, r.errOut)
	}
	exists := func(key string) (bool, int) {
		r := run(t, url, "check", key, "--capacity", "10", "--rate", "1", "-o", "json")
		var v struct {
			Exists *bool `json:"exists"`
		}
		if err := json.Unmarshal([]byte(r.out), &v); err != nil || v.Exists == nil {
			t.Fatalf("check %s -o json: %v %q", key, err, r.out)
		}
		return *v.Exists, r.code
	}
	if e, code := exists("rate:user:nokey"); e || code != ExitNoKey {
		t.Errorf("missing key: exists %v exit %d", e, code)
	}
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	if e, code := exists("rate:user:1"); !e || code != ExitOK {
		t.Errorf("a bucket: exists %v exit %d", e, code)
	}
}

// TestMissingKeyTTLInJSON: ttl_ms is -2 for a key that does not exist (Redis's PTTL) and -1
// for a key without a TTL, in inspect's and watch's JSON alike.
func TestMissingKeyTTLInJSON(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	run(t, url, "consume", "rate:user:1", "--capacity", "10", "--rate", "1")
	if err := c.Persist(context.Background(), "rate:user:1").Err(); err != nil {
		t.Fatal(err)
	}
	ttl := func(args ...string) float64 {
		t.Helper()
		r := run(t, url, args...)
		var v struct {
			TTLMS  *float64 `json:"ttl_ms"`
			Exists bool     `json:"exists"`
		}
		code := ExitOK
		if args[0] == "inspect" && strings.Contains(args[1], "nokey") {
			code = ExitNoKey // a key named that does not exist: exit 6
		}
		if err := json.Unmarshal([]byte(strings.SplitN(r.out, "\n{", 2)[0]), &v); r.code != code || err != nil || v.TTLMS == nil {
			t.Fatalf("%v: exit %d %v %q %q", args, r.code, err, r.out, r.errOut)
		}
		return *v.TTLMS
	}
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{[]string{"inspect", "rate:user:nokey", "-o", "json"}, -2},
		{[]string{"inspect", "rate:user:1", "-o", "json"}, -1},
		{[]string{"watch", "rate:user:nokey", "-o", "json", "--count", "1"}, -2},
		{[]string{"watch", "rate:user:1", "-o", "json", "--count", "1"}, -1},
	} {
		if got := ttl(tc.args...); got != tc.want {
			t.Errorf("%v: ttl_ms %v, want %v", tc.args, got, tc.want)
		}
	}
	r := run(t, url, "inspect", "rate:user:nokey", "-o", "yaml")
	if !strings.Contains(r.out, "ttl_ms: -2\n") || r.code != ExitNoKey {
		t.Errorf("inspect -o yaml of a missing key: %q", r.out)
	}
}

// TestDecideMissingKeyWithoutSpec: check and consume of a key that does not exist, with no
// capacity and rate from flags or a rule, say first that the key does not exist (a
// misspelling?), then what to pass; consume exits 2 (it needs a spec to create the bucket),
// check 6 (no such key, as inspect); nothing written. A bucket that exists
// without a stored spec keeps its message.
func TestDecideMissingKeyWithoutSpec(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	want := `bucketctl: "rate:user:nokey" does not exist, so it has no stored capacity/rate: check the key's spelling (or it expired full: a bucket's key expires once it has refilled), or pass --capacity and --rate (a missing bucket is full)` + "\n"
	r := run(t, url, "consume", "rate:user:nokey")
	if r.code != ExitUsage || r.errOut != want {
		t.Errorf("consume of a missing key: exit %d stderr %q, want exit 2 and %q", r.code, r.errOut, want)
	}
	// check only reads: the missing key is its answer, exit 6 as for inspect.
	wantCheck := `bucketctl: no such key: "rate:user:nokey" (misspelt, or a bucket that expired full or was refilled by a reset that deletes: a bucket's key expires once it has refilled, and a missing bucket reads as full); pass --capacity and --rate to see what a new bucket would decide` + "\n"
	if r := run(t, url, "check", "rate:user:nokey"); r.code != ExitNoKey || r.errOut != wantCheck {
		t.Errorf("check of a missing key: exit %d stderr %q, want exit %d and %q", r.code, r.errOut, ExitNoKey, wantCheck)
	}
	if n := c.Exists(context.Background(), "rate:user:nokey").Val(); n != 0 {
		t.Fatal("the key was created")
	}
	c.HSet(context.Background(), "ex:1", "tokens", "3", "last_refill", "1700000000.5")
	r = run(t, url, "check", "ex:1")
	if r.code != ExitUsage || strings.Contains(r.errOut, "does not exist") || !strings.Contains(r.errOut, "has no stored capacity/rate") {
		t.Errorf("check of an express bucket without a spec: exit %d %q", r.code, r.errOut)
	}
}
