package cmd

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/tui"
)

// shown is what every view must print for one bucket: the strings of the one formatting
// layer. The buckets are chosen so these stay the same for a minute (slow refill, TTL in
// whole minutes). Two of them take longer to refill than their TTL: their time to full is
// the key's expiry, when the application starts them full.
type shown struct {
	key                               string
	tokens, capacity, fill, full, ttl string
	// rate is the number watch prints (per second); rateUnit the rate with its unit, as
	// inspect and top print it.
	rate, rateUnit string
	fields         []any // the hash
}

var consistencyBuckets = []shown{
	{key: "fc:full", tokens: "16,000", capacity: "16,000", rate: "250", rateUnit: "250/s", fill: "100%", full: "0s", ttl: "2h30m",
		fields: []any{"tokens", "16000", "capacity", "16000", "rate", "250"}},
	{key: "fc:{tenant-4711}:big", tokens: "9,289", capacity: "20,000", rate: "0.001", rateUnit: "3.6/h", fill: "46%", full: "2h30m", ttl: "2h30m",
		fields: []any{"tokens", "9289.7", "capacity", "20000", "rate", "0.001"}},
	{key: "fc:small", tokens: "7.09", capacity: "10", rate: "0.00011", rateUnit: "0.4/h", fill: "70%", full: "2h30m", ttl: "2h30m",
		fields: []any{"tokens", "7.09", "capacity", "10", "rate", "0.00011"}},
}

var cellSep = regexp.MustCompile(`\s{2,}`)

// tableRows reads a plain table: each row's cells by header title, by key.
func tableRows(t *testing.T, out string) map[string]map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := cellSep.Split(lines[0], -1)
	rows := map[string]map[string]string{}
	for _, l := range lines[1:] {
		c := cellSep.Split(l, -1)
		if len(c) > len(header) {
			t.Fatalf("row %q has %d cells, header %q %d", l, len(c), lines[0], len(header))
		}
		row := map[string]string{}
		for i, h := range header {
			if i < len(c) {
				row[h] = c[i] // the last cells may be empty
			}
		}
		rows[c[0]] = row
	}
	return rows
}

// logfmt reads one watch line.
func logfmt(line string) map[string]string {
	kv := map[string]string{}
	for _, f := range strings.Fields(line) {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		}
	}
	return kv
}

// snapMsg asks viewProbe for the screen.
type snapMsg struct{}

// viewProbe wraps a live view so the test can read its screen while the real program runs.
type viewProbe struct {
	tea.Model
	views chan string
}

func (p viewProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(snapMsg); ok {
		p.views <- p.Model.View()
		return p, nil
	}
	m, cmd := p.Model.Update(msg)
	p.Model = m
	return p, cmd
}

// TestSameStringsEverywhere: list, inspect and watch (piped) and the top view print the
// same strings for the same bucket: tokens, capacity, rate, fill, time to full, TTL and
// the decision counters.
func TestSameStringsEverywhere(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	now, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range consistencyBuckets {
		c.HSet(ctx, b.key, append(b.fields, "ts", now.UnixMicro(), "allowed", 5912, "denied", 3)...)
		// 2h29m30s: the views read 2h30m (a wait is rounded up) however long the commands
		// take (up to 29 s), and never 2h31m (a read within the millisecond of the PEXPIRE
		// would have seen exactly 150m had it been set so).
		c.PExpire(ctx, b.key, 150*time.Minute-30*time.Second)
	}

	list := tableRows(t, run(t, srv.URL(), "list", "--match", "fc:*").out)
	keys := make([]string, len(consistencyBuckets))
	for i, b := range consistencyBuckets {
		keys[i] = b.key
	}
	inspect := tableRows(t, run(t, srv.URL(), append([]string{"inspect"}, keys...)...).out)
	for _, b := range consistencyBuckets {
		want := map[string]string{"TOKENS": b.tokens, "CAPACITY": b.capacity, "FILL": b.fill, "FULL-IN": b.full, "TTL": b.ttl}
		for col, w := range want {
			if got := list[b.key][col]; got != w {
				t.Errorf("list %s %s = %q, want %q", b.key, col, got, w)
			}
			if got := inspect[b.key][col]; got != w {
				t.Errorf("inspect %s %s = %q, want %q", b.key, col, got, w)
			}
		}
		if got := inspect[b.key]["RATE"]; got != b.rateUnit {
			t.Errorf("inspect %s RATE = %q, want %q", b.key, got, b.rateUnit)
		}
		if got := list[b.key]["RATE"]; got != b.rateUnit {
			t.Errorf("list %s RATE = %q, want %q (as inspect)", b.key, got, b.rateUnit)
		}
		if got := inspect[b.key]["ALLOWED"]; got != "5,912" {
			t.Errorf("inspect %s ALLOWED = %q, want 5,912", b.key, got)
		}

		w := run(t, srv.URL(), "watch", b.key, "--count", "1")
		kv := logfmt(w.out)
		for k, want := range map[string]string{"tokens": b.tokens, "capacity": b.capacity, "rate": b.rate, "fill": b.fill, "ttl": b.ttl} {
			if kv[k] != want {
				t.Errorf("watch %s %s=%q, want %q (%q)", b.key, k, kv[k], want, w.out)
			}
		}
	}

	// top: the real program over the same Redis.
	st := bucket.NewStore(c)
	styles := tui.NewStyles(termenv.Ascii)
	m := tui.NewTop(NewTopSource(st, TopParams{Match: "fc:*", Interval: time.Minute}),
		tui.TopOptions{Match: "fc:*", LiveOptions: tui.LiveOptions{Addr: srv.Addr(), Interval: time.Minute, Styles: &styles}})
	p := &viewProbe{Model: m, views: make(chan string, 1)}
	tm := teatest.NewTestModel(t, *p, teatest.WithInitialTermSize(200, 20))
	t.Cleanup(func() { _ = tm.Quit() })
	var screen string
	redistest.WaitFor(t, 10*time.Second, "top to show the buckets", func() bool {
		tm.Send(snapMsg{})
		select {
		case screen = <-p.views:
		case <-time.After(time.Second):
			return false
		}
		for _, k := range keys {
			if !strings.Contains(screen, k) {
				return false
			}
		}
		return true
	})
	for _, b := range consistencyBuckets {
		var row []string
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, b.key) {
				row = strings.Fields(l)
			}
		}
		for _, want := range []string{b.tokens, b.capacity, b.rateUnit, b.ttl} {
			found := false
			for _, f := range row {
				found = found || f == want
			}
			if !found {
				t.Errorf("top's row of %s lacks %q: %q", b.key, want, row)
			}
		}
	}
}
