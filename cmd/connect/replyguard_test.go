package connect

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestReplyScanner: replies bucketctl reads pass, whatever way they are cut into reads; a
// header declaring more than a reply of bucketctl's ever holds is refused as soon as its
// line ends, and stays refused.
func TestReplyScanner(t *testing.T) {
	t.Parallel()
	ok := []string{
		"+OK\r\n",
		"-ERR bucketctl: not a native bucket\r\n",
		":42\r\n",
		"$-1\r\n*-1\r\n_\r\n",
		// A bulk payload is not read as headers, even when it looks like one.
		"$12\r\n*99999999\r\n\r\n",
		// A SCAN page: cursor and 3 keys.
		"*2\r\n$4\r\n1234\r\n*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
		// HELLO 3's map, a push, a set, a verbatim string, a double, a big number.
		"%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n>3\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n*0\r\n~1\r\n+x\r\n=7\r\ntxt:abc\r\n,1.5\r\n(123\r\n",
		// As many elements as the guard allows, declared at once.
		"*1048576\r\n",
	}
	for _, in := range ok {
		for _, cut := range []int{1, 3, 7, len(in)} {
			var s replyScanner
			for i := 0; i < len(in); i += cut {
				if err := s.scan([]byte(in[i:min(i+cut, len(in))])); err != nil {
					t.Fatalf("%q in reads of %d: %v", in, cut, err)
				}
			}
		}
	}
	for in, want := range map[string]string{
		"*2147483000\r\n":                  "2147483000 elements",
		"%1048577\r\n":                     "elements",
		"*1000000\r\n*1000000\r\n":         "elements",
		"$2147483000\r\n":                  "a string of 2147483000 bytes",
		"*1\r\n$67108865\r\n":              "a string of 67108865 bytes",
		"*1234567890123456789012345\r\n":   "a length of more than 24 digits",
		">1\r\n~2\r\n%1048576\r\n":         "elements",
		"*3\r\n$1\r\na\r\n*2000000\r\n":    "2000000 elements",
		"+OK\r\n$5\r\nhello\r\n*3000000\r": "", // not refused before its line ends
	} {
		var s replyScanner
		err := s.scan([]byte(in))
		if want == "" {
			if err != nil {
				t.Fatalf("%q: refused before the header's line ended: %v", in, err)
			}
			if err = s.scan([]byte("\n")); err == nil {
				t.Fatalf("%q + LF: not refused", in)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: error %v, want one naming %q", in, err, want)
		}
		if err2 := s.scan([]byte("+OK\r\n")); err2 == nil {
			t.Fatalf("%q: a refused connection read on", in)
		}
	}
}

// TestDeadlineNeverLater: go-redis moves a deadline before every command; a move later by
// less than the slack keeps the one set, so a read may end early by at most the slack,
// never late; an earlier deadline, and no deadline, are always set.
func TestDeadlineNeverLater(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := guard(raw).(*guardSyscallConn)
	defer c.Close()
	set := func(t0 time.Time) time.Time {
		t.Helper()
		if err := c.SetReadDeadline(t0); err != nil {
			t.Fatal(err)
		}
		return c.rd.at
	}
	far := time.Now().Add(10 * time.Second)
	if got := set(far); !got.Equal(far) {
		t.Fatalf("first deadline %v, want %v", got, far)
	}
	if got := set(far.Add(100 * time.Millisecond)); !got.Equal(far) {
		t.Errorf("a move by 100ms of a 10s deadline re-armed it: %v", got)
	}
	if later := far.Add(time.Second); !set(later).Equal(later) {
		t.Errorf("a move by 1s of a 10s deadline was skipped")
	}
	if !set(time.Time{}).IsZero() {
		t.Errorf("clearing the deadline was skipped")
	}
	soon := time.Now().Add(50 * time.Millisecond)
	set(far)
	if got := set(soon); !got.Equal(soon) {
		t.Fatalf("an earlier deadline was skipped: %v", got)
	}
	// The server never writes: the read ends at the earlier deadline, not at the far one.
	_, err = c.Read(make([]byte, 8))
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("read: %v, want a timeout", err)
	}
	if over := time.Since(soon); over > 5*time.Second {
		t.Errorf("read timed out %s after its deadline", over)
	}
	// SetDeadline sets both; a write deadline follows the same rule.
	if err := c.SetDeadline(far); err != nil || !c.wd.at.Equal(far) || !c.rd.at.Equal(far) {
		t.Fatalf("SetDeadline: %v, read %v, write %v", err, c.rd.at, c.wd.at)
	}
	if err := c.SetWriteDeadline(far.Add(time.Millisecond)); err != nil || !c.wd.at.Equal(far) {
		t.Errorf("a move by 1ms of a 10s write deadline re-armed it: %v %v", err, c.wd.at)
	}
	// A deadline the connection refused is not taken as set: the next one is set in full.
	c.Close()
	if err := c.SetReadDeadline(far.Add(time.Second)); err == nil || !c.rd.at.IsZero() {
		t.Errorf("on a closed connection: %v, deadline kept as %v", err, c.rd.at)
	}
}
