package scan

import (
	"context"
	"errors"
	"sync"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/cost"
)

type page struct {
	states []bucket.State
	stats  Stats
	err    error
}

// readers is how many pages an unlimited scan reads at once, on as many connections, so the
// server reads one page while the client decodes another.
const readers = 2

// pages reads pages ahead in goroutines; the channel closes at the end or after a page with
// err. Cancel ctx to stop it early.
func (sc *Scanner) pages(ctx context.Context) <-chan page {
	if sc.o.Limit == 0 {
		return sc.readAhead(ctx)
	}
	ch := make(chan page, 1)
	go func() {
		defer close(ch)
		for {
			states, err := sc.Next(ctx)
			if errors.Is(err, ErrEnd) {
				return
			}
			select {
			case ch <- page{states, sc.Stats(), err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// readAhead is pages for an unlimited scan: one goroutine SCANs (each next SCAN sent ahead),
// readers take the pages in turn, each its own line with its native hint, and they are handed
// on in SCAN order. The first page is read alone, as it may load the read script.
func (sc *Scanner) readAhead(ctx context.Context) <-chan page {
	type job struct {
		n    *scanNode
		keys []string
		last bool
		out  chan page
	}
	sc.ahead = true
	ctx = cost.With(ctx, &sc.cost)
	order := make(chan *job, readers)
	var lines [readers]chan *job
	for i := range lines {
		lines[i] = make(chan *job)
	}
	go func() {
		defer func() {
			close(order)
			for _, line := range lines {
				close(line)
			}
		}()
		for i := 0; ; i++ {
			n, keys, _, err := sc.nextKeys(ctx)
			if errors.Is(err, ErrEnd) {
				return
			}
			j := &job{n: n, keys: keys, last: sc.allDone(), out: make(chan page, 1)}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			if err != nil {
				j.out <- page{err: err}
				return
			}
			select {
			case lines[i%readers] <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	firstRead := make(chan struct{})
	readFirst := sync.OnceFunc(func() { close(firstRead) })
	for i, line := range lines {
		go func() {
			var hint nativeHint
			for j := range line {
				if i > 0 {
					select {
					case <-firstRead:
					case <-ctx.Done():
					}
				}
				states, _, _, err := sc.readKeys(ctx, j.n.c, false, j.keys, 0, &hint)
				if i == 0 {
					readFirst()
				}
				j.out <- page{states: states, err: err}
			}
		}()
	}
	ch := make(chan page, 1)
	go func() {
		defer close(ch)
		for j := range order {
			var p page
			select {
			case p = <-j.out:
			case <-ctx.Done():
				return
			}
			if j.n != nil { // SCAN answered
				sc.stats.Pages++
				sc.stats.Keys += int64(len(j.keys))
			}
			sc.count(p.states, j.last && p.err == nil)
			p.stats = sc.Stats()
			select {
			case ch <- p:
			case <-ctx.Done():
				return
			}
			if p.err != nil {
				return
			}
		}
	}()
	return ch
}
