package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Session runs a load test's runs one after another, and is what a live view reads.
type Session struct {
	mu      sync.Mutex
	cur     *Engine
	reports []Report
	err     error
	ended   time.Time // when the last run ended: a PING after it is not the runs' time
}

// AfterRunGrace is the time the PING and clean-up after a run may take in all.
const AfterRunGrace = time.Second

// Run runs each config in turn on store until one fails, ctx ends, or a run with errors
// leaves the server not answering a PING within AfterRunGrace.
func (s *Session) Run(ctx context.Context, store *bucket.Store, configs []Config, server string) {
	err := s.run(ctx, store, configs, server)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	if s.ended.IsZero() {
		s.ended = time.Now()
	}
}

func (s *Session) run(ctx context.Context, store *bucket.Store, configs []Config, server string) error {
	for i, c := range configs {
		if ctx.Err() != nil {
			return nil
		}
		e, err := New(store, c)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.cur = e
		s.mu.Unlock()
		r, err := e.Run(ctx)
		if _, stopped := errors.AsType[*StoppedError](err); err != nil && !stopped {
			return err
		}
		r.Server = server
		s.mu.Lock()
		s.reports, s.ended = append(s.reports, r), time.Now()
		s.mu.Unlock()
		if err != nil {
			return err
		}
		if r.Errors == 0 || i+1 == len(configs) {
			continue
		}
		perr := Within(ctx, AfterRunGrace, func(ctx context.Context) error { return store.Redis().Ping(ctx).Err() })
		if rediserr.IsUnreachable(perr) {
			return fmt.Errorf("Redis at %s did not answer after the %s run, so the comparison stopped there: %w", server, r.Strategy, perr)
		}
	}
	return nil
}

// Snapshot is the current run's snapshot (zero before the first starts).
func (s *Session) Snapshot() Snapshot {
	s.mu.Lock()
	e := s.cur
	s.mu.Unlock()
	if e == nil {
		return Snapshot{}
	}
	return e.Snapshot()
}

// Result is the reports of the runs that ended, and the error that stopped them.
func (s *Session) Result() ([]Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Report(nil), s.reports...), s.err
}

// Ended is when the last run ended (when Run returned if none did); read it after Run.
func (s *Session) Ended() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Within runs fn with a deadline d and waits at most d for it (a handshake ignores the deadline).
func Within(ctx context.Context, d time.Duration, fn func(context.Context) error) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- fn(wctx)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("no answer in time: %w", context.DeadlineExceeded)
	}
}

// Failed sums up the requests that failed across reports.
func Failed(reports []Report) (failed, total int64) {
	for _, r := range reports {
		failed += r.Errors
		total += r.Requests
	}
	return failed, total
}
