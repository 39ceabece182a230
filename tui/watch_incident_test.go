package tui

import (
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// missing is what a read of a key that does not exist returns: no type, no spec (the
// native layout keeps its spec in the bucket), TTL -2.
func missing(key string, now int64) bucket.State {
	return bucket.State{Key: key, Type: "none", Now: now, TTL: -2}
}

// TestWatchMissingKey: a key that does not exist reads as missing, never as a bucket of 0
// tokens (a typo must not look like a drained bucket).
func TestWatchMissingKey(t *testing.T) {
	bothColours(t, func(t *testing.T, st *Styles) {
		feed := make(chan read)
		var calls atomic.Int32
		opts := watchOpts()
		opts.Styles = st
		opts.Key = "rate:api:4Z"
		tm, p := run(t, NewWatch(feedSource(feed, &calls), opts), 80, 24)
		feed <- read{st: missing("rate:api:4Z", at(0))}
		screen := plain(waitView(t, tm, p, contains("missing: no such key")))
		checkSize(t, screen, 80, 24)
		if strings.Contains(screen, "tokens 0") || strings.Contains(screen, "0 / ") {
			t.Errorf("a missing key shows 0 tokens:\n%s", screen)
		}
	})
}

// xLabels reads the chart's X axis labels (the line after the axis) as seconds before now.
func xLabels(t *testing.T, screen string) []float64 {
	t.Helper()
	lines := strings.Split(plain(screen), "\n")
	for i, l := range lines {
		if strings.Contains(l, "└") && i+1 < len(lines) {
			var out []float64
			for _, f := range strings.Fields(lines[i+1]) {
				if f == "now" {
					out = append(out, 0)
					continue
				}
				d, err := time.ParseDuration(strings.TrimPrefix(f, "-"))
				if err != nil {
					t.Fatalf("label %q: %v", f, err)
				}
				out = append(out, d.Seconds())
			}
			return out
		}
	}
	t.Fatalf("no chart on screen:\n%s", screen)
	return nil
}

// evenSteps checks labels go down by one step to "now": -30s -20s -10s now.
func evenSteps(t *testing.T, labels []float64) {
	t.Helper()
	if len(labels) < 2 || labels[len(labels)-1] != 0 {
		t.Fatalf("labels %v: want a tick and now at least", labels)
	}
	step := labels[len(labels)-2]
	for i := 0; i < len(labels)-1; i++ {
		if d := labels[i] - labels[i+1]; d != step {
			t.Fatalf("labels %v: step %vs then %vs", labels, step, d)
		}
	}
}

// TestWatchKeepsHistoryWhenKeyVanishes: a Redis restart empties the key; the chart keeps
// what it had, shows the key as missing, and picks up the level when it is back.
func TestWatchKeepsHistoryWhenKeyVanishes(t *testing.T) {
	feed := make(chan read)
	var calls atomic.Int32
	tm, p := run(t, NewWatch(feedSource(feed, &calls), watchOpts()), 100, 30)
	for _, st := range history(5) { // 40 s of a draining bucket
		feed <- read{st: st}
	}
	withChart := waitView(t, tm, p, contains("12 / 100", "now"))
	for i := 5; i < 8; i++ {
		feed <- read{st: missing("rate:api:42", at(time.Duration(i)*10*time.Second))}
	}
	// The view saw the key 30 s ago: it says so, not "updated never".
	screen := waitView(t, tm, p, contains("missing: no such key", "gone for 30s (deleted or expired)"))
	braille := regexp.MustCompile(`[\x{2801}-\x{28FF}]`)
	if n, was := len(braille.FindAllString(screen, -1)), len(braille.FindAllString(withChart, -1)); n == 0 || n < was/2 {
		t.Fatalf("the chart lost its history when the key vanished (%d dots, %d before):\n%s", n, was, screen)
	}
	evenSteps(t, xLabels(t, screen))
	feed <- read{st: native("rate:api:42", at(80*time.Second), 100, 100, 10, 0, 0)}
	screen = waitView(t, tm, p, contains("100 / 100"))
	if labels := xLabels(t, screen); labels[0] < 60 {
		t.Errorf("after the key is back the chart spans %vs, want the whole 80s", labels[0])
	}
}

// TestChartLabelsEvenSteps: every width and span labels the time axis in one round step.
func TestChartLabelsEvenSteps(t *testing.T) {
	feed := make(chan read)
	var calls atomic.Int32
	tm, p := run(t, NewWatch(feedSource(feed, &calls), watchOpts()), 80, 24)
	for i := 0; i < 10; i++ { // 9 s: the labels were -9s -7s -6s …
		feed <- read{st: native("rate:api:42", at(time.Duration(i)*time.Second), float64(10*i), 100, 10, 0, 0)}
	}
	screen := waitView(t, tm, p, contains("90 / 100"))
	if labels := xLabels(t, screen); len(labels) < 4 {
		t.Errorf("80 columns over 9s have labels %v, want several", labels)
	}
	evenSteps(t, xLabels(t, screen))
	for _, w := range []int{40, 80, 120, 200} {
		for _, span := range []float64{2.5, 9, 61, 299, 3600} {
			row := xAxisLabels(span, 4, w-5, w)
			labels := xLabels(t, "└\n"+row)
			evenSteps(t, labels)
			if len([]rune(row)) > w {
				t.Errorf("w=%d span=%v: label row %d wide", w, span, len([]rune(row)))
			}
		}
	}
}

func TestWatchNamesItsServer(t *testing.T) {
	feed := make(chan read)
	var calls atomic.Int32
	opts := watchOpts()
	opts.Key = "rl:{tenant-4711}:route:/api/v1/orders/by-customer/export"
	opts.Server = "10.0.0.12:6379 (context prod-eu)"
	tm, p := run(t, NewWatch(feedSource(feed, &calls), opts), 80, 24)
	screen := waitView(t, tm, p, contains("waiting for the first read"))
	first := strings.SplitN(screen, "\n", 2)[0]
	if !strings.Contains(first, "on 10.0.0.12:6379 (context prod-eu)") || !strings.Contains(first, "…") ||
		!strings.Contains(first, "export") {
		t.Errorf("at 80 columns the header should cut the key in its middle and name the server: %q", first)
	}
}

// TestWatchColourMovesNothing: with colour the screen holds the same text in the same cells.
func TestWatchColourMovesNothing(t *testing.T) {
	screens := map[string]string{}
	bothColours(t, func(t *testing.T, st *Styles) {
		feed := make(chan read)
		var calls atomic.Int32
		opts := watchOpts()
		opts.Styles = st
		tm, p := run(t, NewWatch(feedSource(feed, &calls), opts), 100, 30)
		for _, s := range history(7) {
			feed <- read{st: s}
		}
		screens[t.Name()] = plain(waitView(t, tm, p, contains("0.5 / 100")))
	})
	p, c := screens[t.Name()+"/plain"], screens[t.Name()+"/colour"]
	if p == "" || p != c {
		t.Errorf("colour moved something:\nplain:\n%s\ncolour:\n%s", p, c)
	}
}
