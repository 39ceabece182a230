package connect

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bounds on what a reply may declare ('bucketctl help design': go-redis allocates what a
// header declares before it reads a byte).
const (
	maxPending = 1 << 20 // aggregate elements declared and not yet read
	maxBulk    = 64 << 20
	maxHeader  = 24 // digits of a length
)

// guardedDialer is go-redis's own dialer whose connections read through the guard.
func guardedDialer(timeout time.Duration, tlsCfg *tls.Config) func(context.Context, string, string) (net.Conn, error) {
	dial := redis.NewDialer(&redis.Options{DialTimeout: timeout, TLSConfig: tlsCfg})
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return guard(c), nil
	}
}

// guard wraps c, keeping syscall.Conn for go-redis's health check (a peek).
func guard(c net.Conn) net.Conn {
	g := &guardConn{Conn: c}
	if sc, ok := c.(syscall.Conn); ok {
		return &guardSyscallConn{guardConn: g, sc: sc}
	}
	return g
}

type guardConn struct {
	net.Conn
	s      replyScanner
	rd, wd deadline
	yield  bool // Gosched before each read
}

// YieldBeforeReads wraps a guarded dialer whose connections Gosched before each read: a
// closed-loop worker whose reply is not in yet lets the others run, instead of a failed
// read and a park in the poller ('help performance').
func YieldBeforeReads(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		switch g := c.(type) {
		case *guardConn:
			g.yield = true
		case *guardSyscallConn:
			g.yield = true
		}
		return c, err
	}
}

// deadline is one of a connection's deadlines as last set, and how far ahead it was then.
type deadline struct {
	at    time.Time
	ahead time.Duration
}

// deadlineSlack is the part of the deadline in force's span by which a command may time out
// early: go-redis moves both deadlines before every command, each move re-arming a runtime timer.
const deadlineSlack = 32

// update sets t through set unless it is later than the deadline in force by less than the slack.
func (d *deadline) update(t time.Time, set func(time.Time) error) error {
	if !t.IsZero() && !d.at.IsZero() && !t.Before(d.at) && t.Sub(d.at) < d.ahead/deadlineSlack {
		return nil
	}
	d.at = time.Time{} // unknown until set succeeds
	if err := set(t); err != nil {
		return err
	}
	d.at, d.ahead = t, time.Until(t)
	return nil
}

func (c *guardConn) SetReadDeadline(t time.Time) error {
	return c.rd.update(t, c.Conn.SetReadDeadline)
}

func (c *guardConn) SetWriteDeadline(t time.Time) error {
	return c.wd.update(t, c.Conn.SetWriteDeadline)
}

func (c *guardConn) SetDeadline(t time.Time) error {
	c.rd, c.wd = deadline{}, deadline{}
	if err := c.Conn.SetDeadline(t); err != nil {
		return err
	}
	c.rd = deadline{at: t, ahead: time.Until(t)}
	c.wd = c.rd
	return nil
}

func (c *guardConn) Read(p []byte) (int, error) {
	if c.s.err != nil {
		return 0, c.s.err
	}
	if c.yield {
		runtime.Gosched()
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if serr := c.s.scan(p[:n]); serr != nil {
			return 0, serr
		}
	}
	return n, err
}

type guardSyscallConn struct {
	*guardConn
	sc syscall.Conn
}

func (c *guardSyscallConn) SyscallConn() (syscall.RawConn, error) { return c.sc.SyscallConn() }

// replyScanner follows RESP2 and RESP3 framing byte by byte, skipping bulk payloads.
type replyScanner struct {
	typ     byte   // the current line's type byte; 0 between lines
	digits  []byte // a counted line's text so far
	skip    int64  // bulk payload bytes still to pass
	pending int64  // elements declared and not yet begun
	err     error
}

// counted says whether a line of type t holds a length.
func counted(t byte) bool { return strings.IndexByte("$=!*~>%|", t) >= 0 }

func (s *replyScanner) scan(b []byte) error {
	if s.err != nil {
		return s.err
	}
	for i := 0; i < len(b); {
		if s.skip > 0 {
			n := min(int64(len(b)-i), s.skip)
			s.skip -= n
			i += int(n)
			continue
		}
		c := b[i]
		i++
		if s.typ == 0 {
			s.typ, s.digits = c, s.digits[:0]
			if s.pending > 0 {
				s.pending--
			}
			continue
		}
		if c != '\n' {
			if counted(s.typ) && c != '\r' {
				if len(s.digits) >= maxHeader {
					return s.refuse(fmt.Sprintf("a length of more than %d digits", maxHeader))
				}
				s.digits = append(s.digits, c)
			}
			continue
		}
		t := s.typ
		s.typ = 0
		if !counted(t) {
			continue
		}
		n, err := strconv.ParseInt(string(s.digits), 10, 64)
		if err != nil || n < 0 {
			continue // null, or go-redis's own protocol error
		}
		switch t {
		case '$', '=', '!':
			if n > maxBulk {
				return s.refuse(fmt.Sprintf("a string of %d bytes (at most %d)", n, maxBulk))
			}
			s.skip = n + 2
		default:
			elems := min(n, maxPending+1)
			if t == '%' || t == '|' {
				elems *= 2
			}
			if s.pending += elems; s.pending > maxPending {
				return s.refuse(fmt.Sprintf("%d elements (at most %d)", n, maxPending))
			}
		}
	}
	return nil
}

func (s *replyScanner) refuse(what string) error {
	s.err = fmt.Errorf("refused a reply declaring %s: not a reply to what bucketctl sent (a broken server, or something between it and bucketctl)", what)
	return s.err
}
