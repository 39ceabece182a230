package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/bucketctl/bucketctl/bucket"
)

// What an operator in an incident trips on in top, each driven through the real program.

// colourStyles are the styles a 16-colour terminal gets: every test that measures a
// screen runs with them too, since escape codes must never move or cut anything.
var colourStyles = NewStyles(termenv.ANSI)

// bothColours runs f without and with colour.
func bothColours(t *testing.T, f func(t *testing.T, st *Styles)) {
	t.Run("plain", func(t *testing.T) { f(t, &testStyles) })
	t.Run("colour", func(t *testing.T) { f(t, &colourStyles) })
}

// plain is a screen without its escape codes.
func plain(s string) string { return ansi.Strip(s) }

func without(k string, s TopSnapshot) TopSnapshot {
	var out []bucket.State
	for _, st := range s.States {
		if st.Key != k {
			out = append(out, st)
		}
	}
	s.States = out
	return s
}

func TestTopCursorStaysOnItsBucketAcrossResets(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:19"))
	tm.Send(press("down")) // user:11, the second emptiest
	tm.Send(press("r"))
	waitView(t, tm, p, contains("Reset rate:user:11?"))
	tm.Send(press("y"))
	waitView(t, tm, p, contains("reset rate:user:11: it reads as full now"))

	// The reset deleted the key: the next scan does not have it. The cursor stays on it
	// (not on user:30, its neighbour), and a second r y cannot reset anything else.
	src.feed <- topRead{snap: without("rate:user:11", fleet(1))}
	screen := waitView(t, tm, p, contains("gone: not in the last scan"))
	if _, sel := rowKeys(screen); sel != "rate:user:11" {
		t.Fatalf("after the reset the cursor is on %q, want rate:user:11:\n%s", sel, screen)
	}
	tm.Send(press("r"))
	waitView(t, tm, p, contains("rate:user:11 is gone already"))
	tm.Send(press("y"))
	if got := src.resetKeys(); len(got) != 1 || got[0] != "rate:user:11" {
		t.Fatalf("resets %v, want only rate:user:11", got)
	}

	// Traffic brings it back, full: it moves down the fill order and the cursor goes with it.
	back := fleet(2)
	for i := range back.States {
		if back.States[i].Key == "rate:user:11" {
			back.States[i].Tokens = 50
		}
	}
	src.feed <- topRead{snap: back}
	screen = waitView(t, tm, p, func(s string) bool { return !strings.Contains(s, "gone:") })
	if _, sel := rowKeys(screen); sel != "rate:user:11" {
		t.Fatalf("the cursor is on %q, want rate:user:11:\n%s", sel, screen)
	}
	tm.Send(press("r"))
	waitView(t, tm, p, contains("Reset rate:user:11?"))
	tm.Send(press("y"))
	waitView(t, tm, p, func(string) bool { return len(src.resetKeys()) == 2 })
	if got := src.resetKeys(); got[1] != "rate:user:11" {
		t.Fatalf("the second reset went to %s, want rate:user:11", got[1])
	}
}

// TestTopOpensAtTheTopOfTheSort: with 5,003 buckets whose order changes between the first
// two scans, the cursor is on the first row, not where the first scan's first bucket went.
func TestTopOpensAtTheTopOfTheSort(t *testing.T) {
	const n = 5003
	snap := func(round int) TopSnapshot {
		states := make([]bucket.State, n)
		for i := range states {
			fill := float64(i) / n
			if round == 1 {
				fill = 1 - fill
			}
			states[i] = native(fmt.Sprintf("rate:t:%04d", i), at(time.Duration(round)*time.Second), fill*100, 100, 10, 0, 0)
		}
		return TopSnapshot{States: states}
	}
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: snap(0)}
	waitView(t, tm, p, contains("▸ rate:t:0000"))
	src.feed <- topRead{snap: snap(1)}
	screen := waitView(t, tm, p, contains("rate:t:5002"))
	keys, sel := rowKeys(screen)
	if sel != "rate:t:5002" || keys[0] != sel || !strings.Contains(screen, "1–") {
		t.Fatalf("selected %q, rows %v; want the first row of the order selected:\n%s", sel, keys, screen)
	}
	// Once the user moves, the cursor stays on its bucket; g follows the top again.
	tm.Send(press("down"))
	waitView(t, tm, p, contains("▸ rate:t:5001"))
	src.feed <- topRead{snap: snap(0)}
	// rate:t:5001 is nearly full now, near the end of the order: the cursor goes with it.
	waitView(t, tm, p, func(s string) bool {
		_, sel := rowKeys(s)
		return sel == "rate:t:5001" && strings.Contains(s, "4,9")
	})
	tm.Send(press("g"))
	screen = waitView(t, tm, p, func(s string) bool { _, sel := rowKeys(s); return sel == "rate:t:0000" })
	if !strings.Contains(screen, "\n1–") {
		t.Fatalf("after g the table does not start at the first row:\n%s", screen)
	}
}

func TestTopNoticesExpire(t *testing.T) {
	src := newFakeTop()
	opts := topOpts()
	opts.NoticeFor = 100 * time.Millisecond
	tm, p := run(t, NewTop(src, opts), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:19"))
	tm.Send(press("r"))
	waitView(t, tm, p, contains("Reset rate:user:19?"))
	tm.Send(press("n")) // closes the dialog and says "reset cancelled" in the same update
	// No key is pressed any more: the message goes by itself.
	waitView(t, tm, p, func(s string) bool { return strings.Contains(s, "KEY") && !strings.Contains(s, "reset cancelled") })
}

func TestTopPauseFreezesRows(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 100, 30)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:28"))
	// Pause while the next read is in flight (the source waits for the test's snapshot).
	waitView(t, tm, p, func(string) bool { return src.calls.Load() >= 2 })
	tm.Send(press(" "))
	before := waitView(t, tm, p, contains("paused: rows and values frozen; space resumes"))
	// The read in flight returns while paused: nothing on screen moves.
	src.feed <- topRead{snap: fleet(1)}
	frozen := waitView(t, tm, p, contains("a newer read waits"))
	if b, f := before[strings.Index(before, "KEY"):], frozen[strings.Index(frozen, "KEY"):]; b != f {
		t.Fatalf("the table changed while paused:\n%s\nthen\n%s", before, frozen)
	}
	if strings.Contains(frozen, " 28 ") {
		t.Fatalf("paused screen shows the new read's deny rate:\n%s", frozen)
	}
	tm.Send(press(" "))
	waitView(t, tm, p, func(s string) bool {
		return !strings.Contains(s, "paused") && strings.Contains(s, " 28 ")
	})
}

func TestTopReverseSort(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("rate:user:19"))
	tm.Send(press("S"))
	screen := waitView(t, tm, p, contains("sort fill ↓ (reversed)"))
	// user:27 is 99% full; the buckets without a fill stay last either way.
	if keys, sel := rowKeys(screen); keys[0] != "rate:user:27" || sel != "rate:user:27" {
		t.Fatalf("reversed fill order starts %v (selected %q), want rate:user:27", keys, sel)
	}
	tm.Send(press("3"))
	screen = waitView(t, tm, p, contains("sort name ↓ (reversed)"))
	if keys, _ := rowKeys(screen); keys[0] != "rate:user:30" {
		t.Fatalf("reversed name order starts %v", keys)
	}
}

func TestTopFootersPerView(t *testing.T) {
	src := newFakeTop()
	tm, p := run(t, NewTop(src, topOpts()), 100, 30)
	src.feed <- topRead{snap: fleet(0)}
	list := waitView(t, tm, p, contains("rate:user:19"))
	for _, want := range []string{"enter detail", "/ filter", "s sort", "S reverse", "space pause", "r reset", "q quit"} {
		if !strings.Contains(list, want) {
			t.Errorf("the table's footer lacks %q", want)
		}
	}
	tm.Send(press("enter"))
	detail := waitView(t, tm, p, contains("detail rate:user:19"))
	foot := detail[strings.LastIndex(detail, "\n")+1:]
	for _, want := range []string{"esc back", "r reset", "space pause", "? help", "q quit"} {
		if !strings.Contains(foot, want) {
			t.Errorf("the detail footer %q lacks %q", foot, want)
		}
	}
	for _, dead := range []string{"filter", "sort", "detail", "up", "down"} {
		if strings.Contains(foot, dead) {
			t.Errorf("the detail footer %q lists %q, which does nothing there", foot, dead)
		}
	}
	tm.Send(press("?"))
	full := waitView(t, tm, p, contains("Redis cost per refresh"))
	if strings.Contains(full, "by fill") || strings.Contains(full, "filter") {
		t.Errorf("the detail pane's full help lists the table's keys:\n%s", full)
	}
}

// TestTopFitsEightyColumns: the full help and the unreachable banner keep every word at
// 80 columns (wrapped, not cut), with and without colour.
func TestTopFitsEightyColumns(t *testing.T) {
	bothColours(t, func(t *testing.T, st *Styles) {
		src := newFakeTop()
		opts := topOpts()
		opts.Styles = st
		opts.Addr = "redis-primary.payments.internal.example.com:6379"
		tm, p := run(t, NewTop(src, opts), 80, 24)
		src.feed <- topRead{snap: fleet(0)}
		waitView(t, tm, p, contains("rate:user:19"))
		tm.Send(press("?"))
		screen := waitView(t, tm, p, contains("Redis cost per refresh"))
		checkSize(t, screen, 80, 24)
		for _, want := range []string{"G    last", "space  pause", "4 by busy", "S reverse", "q quit", "? help", "after y."} {
			if !strings.Contains(plain(screen), want) {
				t.Errorf("80-column help lacks %q:\n%s", want, plain(screen))
			}
		}
		tm.Send(press("?"))
		cause := errors.New("dial tcp 10.20.30.40:6379: i/o timeout after 5s while reading the reply of SCAN on the primary of shard 3")
		src.feed <- topRead{err: fmt.Errorf("%w (%w)", cause, refused())}
		screen = waitView(t, tm, p, contains("Redis unreachable"))
		checkSize(t, screen, 80, 24)
		text := strings.Join(strings.Fields(plain(screen)), " ")
		for _, want := range []string{"at redis-primary.payments.internal.example.com:6379", "retrying every 10ms",
			"of shard 3", "connection refused"} {
			if !strings.Contains(text, want) {
				t.Errorf("the 80-column banner lost %q:\n%s", want, plain(screen))
			}
		}
	})
}

// TestTopLongKeys: the key column takes the width there is, and when it must cut it cuts
// in the middle so the routes that tell the keys apart stay readable.
func TestTopLongKeys(t *testing.T) {
	routes := []string{"/api/v1/orders", "/api/v1/users", "/api/v1/invoices"}
	var states []bucket.State
	for i, r := range routes {
		states = append(states, native("rl:{tenant-4711}:route:"+r, at(0), float64(10*i+5), 100, 10, 0, 0))
	}
	bothColours(t, func(t *testing.T, st *Styles) {
		src := newFakeTop()
		opts := topOpts()
		opts.Styles = st
		tm, p := run(t, NewTop(src, opts), 120, 20)
		src.feed <- topRead{snap: TopSnapshot{States: states}}
		wide := plain(waitView(t, tm, p, contains("3 buckets")))
		checkSize(t, wide, 120, 20)
		for _, r := range routes {
			if !strings.Contains(wide, "rl:{tenant-4711}:route:"+r) {
				t.Errorf("at 120 columns the key of %s is cut:\n%s", r, wide)
			}
		}
		tm.Send(tea.WindowSizeMsg{Width: 60, Height: 20})
		narrow := plain(waitView(t, tm, p, func(s string) bool { return !strings.Contains(plain(s), "route:/api/v1/users") }))
		checkSize(t, narrow, 60, 20)
		for _, tail := range []string{"/orders", "/users", "/invoices"} {
			if !strings.Contains(narrow, "…") || !strings.Contains(narrow, tail) {
				t.Errorf("at 60 columns the tail %s is lost:\n%s", tail, narrow)
			}
		}
	})
}

// TestTopNamesItsServer: the header and the reset dialog name the server and context.
func TestTopNamesItsServer(t *testing.T) {
	src := newFakeTop()
	opts := topOpts()
	opts.Server = "10.0.0.12:6379 (context prod-eu)"
	tm, p := run(t, NewTop(src, opts), 80, 24)
	src.feed <- topRead{snap: fleet(0)}
	waitView(t, tm, p, contains("on 10.0.0.12:6379 (context prod-eu)", "rate:user:19"))
	tm.Send(press("r"))
	screen := waitView(t, tm, p, contains("Reset rate:user:19?"))
	if !strings.Contains(strings.Join(strings.Fields(screen), " "), "on 10.0.0.12:6379 (context prod-eu)") {
		t.Errorf("the reset dialog does not name the server:\n%s", screen)
	}
}

// TestTopOpensOnTheBusiestRow: the demo opens sorted by decisions per second, the busiest
// bucket selected, once two reads give rates.
func TestTopOpensOnTheBusiestRow(t *testing.T) {
	src := newFakeTop()
	opts := topOpts()
	opts.Sort = SortBusy
	tm, p := run(t, NewTop(src, opts), 100, 30)
	src.feed <- topRead{snap: fleet(0)}
	src.feed <- topRead{snap: fleet(1)}
	// user:28 decides 56 allowed + 28 denied per second, more than any other.
	screen := waitView(t, tm, p, contains("sort busy ↓", "▸ rate:user:28"))
	if keys, _ := rowKeys(screen); keys[0] != "rate:user:28" {
		t.Errorf("busiest first: rows %v", keys)
	}
}

// TestTopColourMovesNothing: with colour the screen holds the same text in the same cells.
func TestTopColourMovesNothing(t *testing.T) {
	screens := map[string]string{}
	bothColours(t, func(t *testing.T, st *Styles) {
		src := newFakeTop()
		opts := topOpts()
		opts.Styles = st
		tm, p := run(t, NewTop(src, opts), 120, 40)
		src.feed <- topRead{snap: fleet(0)}
		src.feed <- topRead{snap: fleet(1)}
		screen := waitView(t, tm, p, contains("rate:user:14", "33 buckets"))
		waitView(t, tm, p, func(s string) bool { return strings.Contains(plain(s), " 28 ") })
		screens[t.Name()] = plain(waitView(t, tm, p, contains("rate:user:14")))
		if st == &colourStyles && screen == plain(screen) {
			t.Fatal("the colour run has no colour")
		}
	})
	p, c := screens[t.Name()+"/plain"], screens[t.Name()+"/colour"]
	if p == "" || p != c {
		t.Errorf("colour moved something:\nplain:\n%s\ncolour:\n%s", p, c)
	}
}
