package cmd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/tui/format"
)

// outcomeError is a write whose round trip failed: Text says what was done, where and why.
type outcomeError struct {
	Text string
	Err  error
}

func (e *outcomeError) Error() string { return e.Text }
func (e *outcomeError) Unwrap() error { return e.Err }

// roundTripFailure is the error of a write (`reset "k"`) whose round trip failed after done
// buckets were reset (-1: one request); a bucket.UncertainError leaves the batch unknown.
func roundTripFailure(f *Factory, what string, done int, err error) error {
	server := serverOf(f)
	cause := lostCause(server, err)
	var ue *bucket.UncertainError
	var did string
	switch {
	case errors.As(err, &ue) && done >= 0:
		did = fmt.Sprintf("%s reset, up to %s more unknown", fmtCount(done), fmtCount(ue.Resets))
	case errors.As(err, &ue):
		did = "outcome unknown, it may or may not have been applied"
	case done >= 0:
		did = fmt.Sprintf("stopped after %s bucket(s) were reset", fmtCount(done))
	default:
		return &outcomeError{fmt.Sprintf("%s on %s: nothing changed: %s", what, server, cause), err}
	}
	return &outcomeError{fmt.Sprintf("%s on %s: %s: %s: re-running the same command is safe", what, server, did, cause), err}
}

// lostCause says why a round trip to server failed, naming the address: never a bare EOF.
func lostCause(server string, err error) string {
	server = lossAddr(server, err)
	switch {
	case rediserr.IsTimeout(err):
		return fmt.Sprintf("Redis at %s did not answer within --timeout (%s)", server, rootText(err))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the connection to %s was lost before the reply (EOF: closed by the server, a restart, a proxy or a firewall?)", server)
	case rediserr.IsLost(err):
		return fmt.Sprintf("the connection to %s was lost before the reply (%s: closed by the server, a restart, a proxy or a firewall?)", server, rootText(err))
	}
	return fmt.Sprintf("%s: %s", server, safe(err.Error()))
}

// lossAddr is the address a round trip to server failed on: the connection's own when err has it.
func lossAddr(server string, err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		server = oe.Addr.String()
	}
	return format.SafeText(server)
}

// namedLoss replaces a bare lost connection or reply timeout in msg, the text of err, by
// lostCause, unless err names it already.
func (f *Factory) namedLoss(msg string, err error) string {
	var (
		oe *outcomeError
		ue *UnreachableError
	)
	timeout := replyTimeout(err)
	if !timeout && !rediserr.IsLost(err) || errors.As(err, &oe) || errors.As(err, &ue) {
		return msg
	}
	cause := rootText(err)
	var op *net.OpError
	if timeout && errors.As(err, &op) {
		cause = safe(op.Error()) // "read tcp a->b: i/o timeout": lostCause names b
	}
	i := strings.Index(msg, cause)
	if i < 0 {
		return msg
	}
	// "scan ADDR: " or "ADDR: " before the cause: lostCause names the address itself.
	head := strings.TrimSuffix(msg[:i], lossAddr(serverOf(f), err)+": ")
	if len(head) < i {
		head = strings.TrimSuffix(head, "scan ")
	}
	return head + lostCause(serverOf(f), err) + msg[i+len(cause):]
}

// replyTimeout reports a server reached that did not answer within --timeout (not a dial).
func replyTimeout(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// rootText is the innermost error's text ("i/o timeout", "connection reset by peer").
func rootText(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return safe(err.Error())
		}
		err = next
	}
}
