package cmd

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestUnknownCommands: a mistyped command, subcommand or flag is one line with a suggestion,
// exit 2; a group alone prints its help.
func TestUnknownCommands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lst"}, `bucketctl: unknown command "lst": did you mean "list"?`},
		{[]string{"script", "bogus"}, `bucketctl: unknown command "bogus" of 'bucketctl script' (see 'bucketctl script --help')`},
		{[]string{"script", "sho"}, `bucketctl: unknown command "sho" of 'bucketctl script': did you mean "show"?`},
		{[]string{"zzzzzz"}, `bucketctl: unknown command "zzzzzz" (see 'bucketctl --help')`},
		{[]string{"list", "--mach", "a*"}, `bucketctl: unknown flag --mach for 'bucketctl list': did you mean --match?`},
		{[]string{"inspect", "k", "--zzzzzz"}, `bucketctl: unknown flag: --zzzzzz (see 'bucketctl inspect --help')`},
		// A global flag, before or after the command, two letters swapped.
		{[]string{"--ulr", "redis://x", "inspect", "k"}, `bucketctl: unknown flag --ulr: did you mean --url? (a global flag: 'bucketctl --help' lists them)`},
		{[]string{"inspect", "k", "--contxet", "prod"}, `bucketctl: unknown flag --contxet: did you mean --context? (a global flag: 'bucketctl --help' lists them)`},
		// A flag value the shell split: the extra words are named as such.
		{[]string{"consume", "k", "--rate", "5", "per", "second"},
			`bucketctl: consume needs exactly one KEY, got 3: the value of --rate looks split by the shell into 3 words (5 per second): quote it, --rate '5 per second'`},
		{[]string{"list", "--match", "rate:", "user:*"},
			`bucketctl: list takes no arguments, got "user:*": the value of --match looks split by the shell into 2 words (rate: user:*): quote it, --match 'rate: user:*'`},
		{[]string{"consume", "k1", "k2", "--rate", "5"}, `bucketctl: consume needs exactly one KEY, got 2 (see 'bucketctl consume --help')`},
		// Words after a value that are more keys, not the rest of the value: no split hint.
		{[]string{"consume", "--cost", "2", "k1", "k2"}, `bucketctl: consume needs exactly one KEY, got 2 (see 'bucketctl consume --help')`},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || strings.TrimRight(r.errOut, "\n") != tc.want || r.out != "" {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, r.code, r.errOut, tc.want)
		}
	}
	if r := run(t, "", "script"); r.code != ExitOK || !strings.Contains(r.out, "Available Commands") {
		t.Errorf("script alone: exit %d %q", r.code, r.out)
	}
}

// TestShortFlags: redis-cli's habits work: -i for an interval, -n for a count.
func TestShortFlags(t *testing.T) {
	t.Parallel()
	io, _, _, _ := testStreams()
	f := newTestFactory(t, io, VersionInfo{})
	var w *WatchOptions
	watch := NewCmdWatch(f, func(o *WatchOptions) error { w = o; return nil })
	watch.SetArgs([]string{"k", "-i", "250ms", "-n", "3"})
	if err := watch.Execute(); err != nil || w == nil || w.Interval.String() != "250ms" || w.Count != 3 {
		t.Fatalf("watch -i 250ms -n 3: %v %+v", err, w)
	}
	var top *TopOptions
	topCmd := NewCmdTop(f, func(o *TopOptions) error { top = o; return nil })
	topCmd.SetArgs([]string{"-i", "2s"})
	if err := topCmd.Execute(); err != nil || top == nil || top.Interval.String() != "2s" {
		t.Fatalf("top -i 2s: %v %+v", err, top)
	}
	var l *ListOptions
	list := NewCmdList(f, func(o *ListOptions) error { l = o; return nil })
	list.SetArgs([]string{"-n", "5"})
	if err := list.Execute(); err != nil || l == nil || l.Limit != 5 {
		t.Fatalf("list -n 5: %v %+v", err, l)
	}
}

// TestInspectOneConnection: inspect of one key opens one connection to Redis, as
// redis-cli does (its reachability PING rides in the pipelines' pool).
func TestInspectOneConnection(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	ctx := context.Background()
	admin.HSet(ctx, "k", "tokens", "1", "ts", "1")
	conns := func() int64 {
		t.Helper()
		info, err := admin.Info(ctx, "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_connections_received:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatal("no total_connections_received in INFO stats")
		return 0
	}
	before := conns()
	if r := run(t, srv.URL(), "inspect", "k"); r.code != ExitOK {
		t.Fatalf("inspect: %d %q", r.code, r.errOut)
	}
	if got := conns() - before; got != 1 {
		t.Fatalf("inspect of one key opened %d connections, want 1", got)
	}
}
