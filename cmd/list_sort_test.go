package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestListSortBy: --sort-by orders the table and the data formats alike, -r reverses, and
// --limit keeps the first rows of the order over every matching key (not the first
// scanned); rows without the measure come after the others.
func TestListSortBy(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	ctx := context.Background()
	// rate:user:N holds 10-(2N-1) tokens: 1 the fullest, 5 the emptiest.
	for i := 1; i <= 5; i++ {
		if r := run(t, url, "consume", fmt.Sprintf("rate:user:%d", i), "--capacity", "10", "--rate", "0.001", "--cost", fmt.Sprint(2*i-1)); r.code != ExitOK {
			t.Fatal(r.errOut)
		}
	}
	// Denials: two on rate:user:5, one on rate:user:4.
	for _, k := range []string{"rate:user:5", "rate:user:5", "rate:user:4"} {
		if r := run(t, url, "consume", k, "--cost", "9"); r.code != ExitDenied {
			t.Fatalf("consume %s --cost 9: exit %d %q", k, r.code, r.errOut)
		}
	}
	c.HSet(ctx, "rate:ex:1", "tokens", "3", "last_refill", "1700000000.5") // no spec: no fill, no TTL
	if err := c.PExpire(ctx, "rate:user:2", time.Second*5).Err(); err != nil {
		t.Fatal(err)
	}
	keys := func(args ...string) []string {
		t.Helper()
		r := run(t, url, append([]string{"list", "--match", "rate:*"}, args...)...)
		if r.code != ExitOK {
			t.Fatalf("list %v: exit %d %q", args, r.code, r.errOut)
		}
		var out []string
		if slices.Contains(args, "json") {
			var v []struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal([]byte(r.out), &v); err != nil {
				t.Fatalf("list %v: %v %q", args, err, r.out)
			}
			for _, s := range v {
				out = append(out, s.Key)
			}
			return out
		}
		for _, line := range strings.Split(strings.TrimSpace(r.out), "\n")[1:] {
			out = append(out, strings.Fields(line)[0])
		}
		return out
	}
	u := func(ns ...int) []string {
		var out []string
		for _, n := range ns {
			out = append(out, fmt.Sprintf("rate:user:%d", n))
		}
		return out
	}
	ex := "rate:ex:1"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--sort-by", "fill"}, append(u(5, 4, 3, 2, 1), ex)},
		{[]string{"--sort-by", "fill", "-o", "json"}, append(u(5, 4, 3, 2, 1), ex)},
		{[]string{"--sort-by", "fill", "-r"}, append(u(1, 2, 3, 4, 5), ex)}, // unknown fill last either way
		{[]string{"--sort-by", "tokens", "--reverse", "-o", "json"}, append(u(1, 2, 3, 4, 5), ex)},
		{[]string{"--sort-by", "name"}, append([]string{ex}, u(1, 2, 3, 4, 5)...)},
		{[]string{"--sort-by", "name", "-r", "-o", "json"}, append(u(5, 4, 3, 2, 1), ex)},
		{[]string{"--sort-by", "ttl"}, append(u(2, 1, 3, 4, 5), ex)}, // 5 s first; no TTL last
		{[]string{"--sort-by", "deny"}, append(u(5, 4, 1, 2, 3), ex)},
		{[]string{"--sort-by", "fill", "--limit", "2"}, u(5, 4)},
		{[]string{"--sort-by", "fill", "-r", "--limit", "2", "-o", "json"}, u(1, 2)},
	} {
		if got := keys(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("list %v: %v, want %v", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sort-by", "size"}, `--sort-by "size": must be one of fill, tokens, name, ttl, deny`},
		{[]string{"-r"}, "--reverse needs --sort-by"},
		{[]string{"--hot", "--sort-by", "fill"}, "--sort-by and --hot do not go together"},
	} {
		if r := run(t, url, append([]string{"list"}, tc.args...)...); r.code != ExitUsage || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("list %v: exit %d %q, want 2 and %q", tc.args, r.code, r.errOut, tc.want)
		}
	}
}

// TestListSortByBound: without --limit, --sort-by holds at most maxSorted rows and refuses
// more with one line naming the way out (exit 2, nothing on stdout); with --limit any
// number of matches is fine.
func TestListSortByBound(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	for i := 0; i < 5; i++ {
		run(t, url, "consume", fmt.Sprintf("b:%d", i), "--capacity", "10", "--rate", "1")
	}
	old := maxSorted
	maxSorted = 3
	t.Cleanup(func() { maxSorted = old })
	r := run(t, url, "list", "--sort-by", "fill", "-o", "json")
	if r.code != ExitUsage || r.out != "" || !strings.Contains(r.errOut, "more than 3 buckets match, and sorting holds them all in memory: give --limit N") {
		t.Fatalf("list --sort-by over the bound: exit %d %q %q", r.code, r.out, r.errOut)
	}
	oneLine(t, r)
	if r := run(t, url, "list", "--sort-by", "name", "--limit", "3"); r.code != ExitOK || strings.Count(r.out, "b:") != 3 || !strings.Contains(r.out, "b:0") {
		t.Fatalf("list --sort-by --limit 3 of 5: exit %d %q %q", r.code, r.out, r.errOut)
	}
}

// TestSortedRowsKeepsTheFirst: the bounded heap keeps exactly the first N rows of the
// order, whatever order they arrive in.
func TestSortedRowsKeepsTheFirst(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var all []bucket.State
	for i := 0; i < 500; i++ {
		all = append(all, bucket.State{Key: fmt.Sprintf("k%03d", i), Exists: true, Spec: bucket.Spec{Capacity: 10, Rate: 1}, Tokens: float64(r.IntN(11))})
	}
	less := listLess("fill", false)
	want := slices.Clone(all)
	slices.SortFunc(want, less)
	for _, limit := range []int{1, 7, 499, 500, 1000} {
		h := &sortedRows{cmp: less, limit: limit}
		for i := 0; i < len(all); i += 64 {
			h.add(all[i:min(i+64, len(all))])
		}
		got := h.sorted()
		if n := min(limit, len(all)); len(got) != n || !slices.EqualFunc(got, want[:n], func(a, b bucket.State) bool { return a.Key == b.Key }) || h.seen != len(all) {
			t.Errorf("limit %d: %d rows kept of %d seen, not the first of the order", limit, len(got), h.seen)
		}
	}
}
