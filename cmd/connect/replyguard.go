package connect

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A reply's size is the server's word: go-redis allocates what a reply's header declares
// (an array of 2,147,483,000 elements, a bulk string of 2 GB) before it reads a byte of it,
// so a broken or hostile server, or anything between it and us, could make bucketctl
// exhaust the machine's memory with a dozen bytes, long past --timeout. Every connection
// bucketctl dials reads through a guard that follows the RESP framing of what arrives and
// refuses, before go-redis sees it, a reply declaring more than bucketctl ever reads.
const (
	// maxPending bounds the elements declared by aggregate headers (arrays, maps, sets,
	// pushes) and not yet read: with go-redis's 16 bytes an element, 16 MiB at most
	// allocated ahead of the data. A SCAN page, a pipeline's replies and a Cluster's slot
	// map are far below it.
	maxPending = 1 << 20
	// maxBulk bounds one bulk string: bucketctl reads buckets, scripts' replies, INFO and
	// key names, never a large value.
	maxBulk = 64 << 20
	// maxHeader bounds the digits of a length.
	maxHeader = 24
)

// guardedDialer is go-redis's own dialer (its timeout, keep-alive and TLS) whose
// connections read through the guard.
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

// guard wraps c. A connection go-redis can health-check by its socket (plain TCP, a unix
// socket) keeps that: the check only peeks (MSG_PEEK), so the guard still reads every byte.
func guard(c net.Conn) net.Conn {
	g := &guardConn{Conn: c}
	if sc, ok := c.(syscall.Conn); ok {
		return &guardSyscallConn{guardConn: g, sc: sc}
	}
	return g
}

type guardConn struct {
	net.Conn
	s replyScanner
}

// Read passes on what the server sent once the scanner has followed it; a refused reply is
// an error of the connection (go-redis drops it), and stays one.
func (c *guardConn) Read(p []byte) (int, error) {
	if c.s.err != nil {
		return 0, c.s.err
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

// replyScanner follows RESP2 and RESP3 framing byte by byte: a line starts with its type
// byte and ends with LF; a bulk type's payload (and its CRLF) is passed without a look.
type replyScanner struct {
	typ     byte   // the current line's type byte; 0 between lines
	digits  []byte // a counted line's text so far
	skip    int64  // bulk payload bytes still to pass
	pending int64  // elements declared and not yet begun
	err     error
}

// counted says whether a line of type t holds a length: bulk strings, verbatim strings and
// bulk errors ($ = !), arrays, sets and pushes (* ~ >), maps and attributes (% |).
func counted(t byte) bool {
	switch t {
	case '$', '=', '!', '*', '~', '>', '%', '|':
		return true
	}
	return false
}

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
			continue // null (-1), or what go-redis refuses as a protocol error itself
		}
		switch t {
		case '$', '=', '!':
			if n > maxBulk {
				return s.refuse(fmt.Sprintf("a string of %d bytes (at most %d)", n, maxBulk))
			}
			s.skip = n + 2
		default:
			elems := min(n, maxPending+1) // (no overflow: past the bound is past it)
			if t == '%' || t == '|' {
				elems *= 2 // a key and a value an entry
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
