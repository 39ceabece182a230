package tui

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/bucketctl/bucketctl/bucket"
)

type read struct {
	st  bucket.State
	err error
}

// feedSource is a WatchSource that returns what the test sends, one read per call.
func feedSource(feed chan read, calls *atomic.Int32) WatchSource {
	return func(ctx context.Context) (bucket.State, error) {
		calls.Add(1)
		select {
		case r := <-feed:
			return r.st, r.err
		case <-ctx.Done():
			return bucket.State{}, ctx.Err()
		}
	}
}

func watchOpts() WatchOptions {
	return WatchOptions{Key: "rate:api:42", LiveOptions: liveOpts()}
}

// history is a native bucket draining over a minute: 10 tokens/s refill, 30 allowed and
// then 5 denied per 10 s.
func history(n int) []bucket.State {
	var out []bucket.State
	tokens := []float64{100, 80, 55, 30, 12, 4, 0.5, 0, 2, 20}
	for i := 0; i < n; i++ {
		out = append(out, native("rate:api:42", at(time.Duration(i)*10*time.Second), tokens[i%len(tokens)],
			100, 10, int64(30*i), int64(5*max(0, i-3))))
	}
	return out
}

func TestWatchGoldenAndResize(t *testing.T) {
	feed := make(chan read)
	var calls atomic.Int32
	tm, p := run(t, NewWatch(feedSource(feed, &calls), watchOpts()), 80, 24)

	screen := waitView(t, tm, p, contains("waiting for the first read"))
	for _, st := range history(7) {
		feed <- read{st: st}
	}
	screen = waitView(t, tm, p, contains("0.5 / 100"))
	checkSize(t, screen, 80, 24)
	// 10 s between reads: 30 allowed, 5 denied, and min(100, 4 + 10·10) - 0.5 consumed.
	for _, want := range []string{"allowed 3/s", "denied 0.5/s (14%)", "consumed 9.95/s", "refill 10/s",
		"retry-after 50ms", "TTL 1m30s", "updated 250ms ago", "layout native", "read 03:04:35"} {
		if !strings.Contains(screen, want) {
			t.Errorf("80x24 screen lacks %q:\n%s", want, screen)
		}
	}
	golden(t, "80x24", screen)

	tm.Send(tea.WindowSizeMsg{Width: 160, Height: 48})
	screen = waitView(t, tm, p, func(s string) bool { return strings.Count(s, "\n") == 47 })
	checkSize(t, screen, 160, 48)
	golden(t, "160x48", screen)

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	screen = waitView(t, tm, p, contains("Redis cost: 1 pipelined round trip per refresh"))
	golden(t, "help", screen)

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

func TestWatchUnreachableThenRecovers(t *testing.T) {
	feed := make(chan read)
	var calls atomic.Int32
	opts := watchOpts()
	var clk manualClock
	opts.Now = clk.now
	tm, p := run(t, NewWatch(feedSource(feed, &calls), opts), 80, 24)

	hist := history(4)
	feed <- read{st: hist[0]}
	feed <- read{st: hist[1]}
	waitView(t, tm, p, contains("allowed 3/s"))
	clk.advance(time.Second)
	feed <- read{err: refused()}
	clk.advance(time.Second)
	feed <- read{err: refused()}
	screen := waitView(t, tm, p, contains("showing data from 2s ago"))
	checkSize(t, screen, 80, 24)
	for _, want := range []string{"Redis unreachable at 127.0.0.1:6379", "connection refused",
		"80 / 100" /* the last data is kept */} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	golden(t, "unreachable", screen)

	// Redis hangs: the next read stays in flight, and the data shown gets older all the
	// same (the age does not stop at the last failure).
	clk.advance(5 * time.Second)
	waitView(t, tm, p, contains("showing data from 7s ago"))

	feed <- read{st: hist[2]}
	screen = waitView(t, tm, p, contains("55 / 100"))
	if strings.Contains(screen, "unreachable") {
		t.Errorf("the banner stays after Redis is back:\n%s", screen)
	}
	golden(t, "recovered", screen)
}

// TestWatchErrorShownSafe: the banner shows an error as the command's ErrText gives it
// (its redactor), and never an escape sequence the error quotes, with ErrText or without.
func TestWatchErrorShownSafe(t *testing.T) {
	hostile := errors.New("AUTH failed for redis://u:S3cretPW@h:1 \x1b]0;pwned\a\x1b[2J")
	for _, redact := range []bool{true, false} {
		feed := make(chan read)
		var calls atomic.Int32
		opts := watchOpts()
		if redact {
			opts.ErrText = func(err error) string { return strings.ReplaceAll(err.Error(), "S3cretPW", "xxxxx") }
		}
		tm, p := run(t, NewWatch(feedSource(feed, &calls), opts), 80, 24)
		feed <- read{st: history(1)[0]}
		feed <- read{err: hostile}
		screen := waitView(t, tm, p, contains("AUTH failed"))
		if strings.Contains(screen, "\x1b]") || strings.Contains(screen, "\x1b[2J") || strings.Contains(screen, "\a") {
			t.Errorf("redact %v: the banner passed an escape sequence through:\n%q", redact, screen)
		}
		if redact && (strings.Contains(screen, "S3cretPW") || !strings.Contains(screen, "u:xxxxx@h:1")) {
			t.Errorf("the banner did not show the error as ErrText gives it:\n%s", screen)
		}
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	}
}

func TestWatchNeverOverlapsReads(t *testing.T) {
	var inflight, most, calls atomic.Int32
	src := func(ctx context.Context) (bucket.State, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		c := calls.Add(1)
		time.Sleep(30 * time.Millisecond) // three intervals: ticks arrive while the read is in flight
		return native("k", at(time.Duration(c)*time.Second), 50, 100, 10, 0, 0), nil
	}
	opts := watchOpts()
	tm, p := run(t, NewWatch(src, opts), 80, 24)
	waitView(t, tm, p, func(string) bool { return calls.Load() >= 5 })
	if m := most.Load(); m != 1 {
		t.Errorf("%d reads were in flight at once, want 1", m)
	}
}

// TestWatchShowsClockSkew: a bucket whose stored time is ahead of the server's says so, on
// a terminal, in place of its age.
func TestWatchShowsClockSkew(t *testing.T) {
	feed := make(chan read)
	var calls atomic.Int32
	tm, p := run(t, NewWatch(feedSource(feed, &calls), watchOpts()), 100, 30)
	st := history(1)[0]
	st.Ahead = 4200 * time.Millisecond
	feed <- read{st: st}
	screen := waitView(t, tm, p, contains("ahead of the server's clock"))
	if !strings.Contains(screen, "4.2s ahead of the server's clock (client clock skew?)") {
		t.Fatalf("screen:\n%s", screen)
	}
}
