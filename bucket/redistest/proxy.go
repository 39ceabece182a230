package redistest

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// Fault is what a Proxy does to the replies of a connection once a Rule fires on it.
type Fault int

const (
	// Pass forwards the replies (a Rule's Before alone acts: a pause, a restart).
	Pass Fault = iota
	// Hold keeps the replies until Release: the client times out, the server has applied.
	Hold
	// Drop closes the client's connection when the reply comes: the request was applied.
	Drop
)

// Rule arms a fault on the connection of the first request that contains Match (such as
// a script's SHA1) once Skip occurrences of Match have passed (a later batch of a
// pipelined script: none of that costs a round trip in the proxy). Before, if set, runs
// once before that request is forwarded to the server. A request is matched by the chunks
// it arrives in.
type Rule struct {
	Match  string
	Skip   int
	Fault  Fault
	Before func()
}

// Proxy is a loopback TCP proxy in front of a server, for tests of replies that come late
// or never: a request passes, its reply is held or the connection dropped.
type Proxy struct {
	ln      net.Listener
	target  string
	release chan struct{}

	mu    sync.Mutex
	rule  *Rule
	fired bool
	seen  int // occurrences of the rule's Match so far
	conns []net.Conn
	once  sync.Once
}

// StartProxy listens on a free loopback port and forwards each connection to target; it
// is closed in t.Cleanup, which also releases held replies.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: target, release: make(chan struct{})}
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address; URL is redis://Addr.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }
func (p *Proxy) URL() string  { return "redis://" + p.Addr() }

// Arm sets the rule that the next requests are matched against.
func (p *Proxy) Arm(r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.fired, p.seen = &r, false, 0
}

// Fired reports whether the armed rule has fired.
func (p *Proxy) Fired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fired
}

// Release lets held replies through.
func (p *Proxy) Release() { p.once.Do(func() { close(p.release) }) }

// Close stops listening, releases held replies and closes every connection.
func (p *Proxy) Close() {
	p.Release()
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		c := &proxyConn{p: p, client: client, server: server, armed: make(chan Fault, 1)}
		go c.requests()
		go c.replies()
	}
}

// proxyConn is one client connection and its connection to the server.
type proxyConn struct {
	p              *Proxy
	client, server net.Conn
	armed          chan Fault // the fault of this connection, once a rule fired on it
	fault          Fault
}

func (c *proxyConn) close() {
	_ = c.client.Close()
	_ = c.server.Close()
}

// requests forwards the client's bytes, firing the rule on the request that matches. A
// held connection stays open to the server until Release, so that the server runs all it
// was sent, as it would if the reply were lost on the way back.
func (c *proxyConn) requests() {
	held := false
	defer func() {
		if held {
			<-c.p.release
		}
		c.close()
	}()
	buf := make([]byte, 64<<10)
	var tail []byte // the end of the last chunk, for a Match split across two
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			if r := c.p.match(&tail, buf[:n]); r != nil {
				if r.Before != nil {
					r.Before()
				}
				held = r.Fault == Hold
				c.armed <- r.Fault
			}
			if _, werr := c.server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// match returns the rule when chunk fires it (once). tail is the connection's last bytes
// before chunk, shorter than Match: an occurrence counted here ends in chunk.
func (p *Proxy) match(tail *[]byte, chunk []byte) *Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.rule
	if r == nil || p.fired || r.Match == "" {
		*tail = (*tail)[:0]
		return nil
	}
	window := append(append([]byte(nil), *tail...), chunk...)
	n := bytes.Count(window, []byte(r.Match))
	*tail = append((*tail)[:0], window[max(0, len(window)-len(r.Match)+1):]...)
	before := p.seen
	p.seen += n
	if n == 0 || before < r.Skip {
		return nil
	}
	p.fired = true
	return r
}

// replies forwards the server's bytes, or holds or drops them once the connection's rule
// fired.
func (c *proxyConn) replies() {
	defer c.close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			select {
			case c.fault = <-c.armed:
			default:
			}
			switch c.fault {
			case Hold:
				<-c.p.release
			case Drop:
				return
			}
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
