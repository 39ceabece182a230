package scan

import (
	"context"
	"errors"

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
// readers read the pages, and they are handed on in SCAN order.
func (sc *Scanner) readAhead(ctx context.Context) <-chan page {
	type job struct {
		n      *scanNode
		keys   []string
		last   bool
		out    chan page
		before *job          // the page two before, whose read says how this one reads
		after  *job          // read first: before, or the first page (which loads the script)
		read   chan struct{} // closed once the read has set hint
		hint   nativeHint
	}
	sc.ahead = true
	ctx = cost.With(ctx, &sc.cost)
	jobs, order := make(chan *job), make(chan *job, readers)
	go func() {
		defer close(jobs)
		defer close(order)
		var before [2]*job
		for {
			n, keys, _, err := sc.nextKeys(ctx)
			if errors.Is(err, ErrEnd) {
				return
			}
			j := &job{n: n, keys: keys, last: sc.allDone(), out: make(chan page, 1), before: before[0], after: before[0], read: make(chan struct{})}
			if j.after == nil {
				j.after = before[1]
			}
			before = [2]*job{before[1], j}
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
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range readers {
		go func() {
			for j := range jobs {
				var hint nativeHint
				if j.after != nil {
					select {
					case <-j.after.read:
						if j.before != nil {
							hint = j.before.hint
						}
					case <-ctx.Done():
					}
				}
				j.before, j.after = nil, nil // else each page holds every page before it
				var got bucket.NativeRead
				states, _, _, err := sc.readKeys(ctx, j.n.c, false, j.keys, 0, hint.first(), &got)
				j.hint = hint.then(j.keys, got)
				close(j.read)
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
