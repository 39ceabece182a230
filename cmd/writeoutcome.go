package cmd

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/cmd/connect"
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
	cause := connect.LostCause(server, err)
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

// namedLoss replaces a bare lost connection or reply timeout in msg, the text of err, by
// connect.LostCause, unless err names it already.
func (f *Factory) namedLoss(msg string, err error) string {
	var (
		oe *outcomeError
		ue *UnreachableError
	)
	timeout := connect.IsReplyTimeout(err)
	if !timeout && !rediserr.IsLost(err) || errors.As(err, &oe) || errors.As(err, &ue) {
		return msg
	}
	cause := connect.RootText(err)
	var op *net.OpError
	if timeout && errors.As(err, &op) {
		cause = safe(op.Error()) // "read tcp a->b: i/o timeout": LostCause names b
	}
	i := strings.Index(msg, cause)
	if i < 0 {
		return msg
	}
	// "scan ADDR: " or "ADDR: " before the cause: LostCause names the address itself.
	head := strings.TrimSuffix(msg[:i], connect.LostAddr(serverOf(f), err)+": ")
	if len(head) < i {
		head = strings.TrimSuffix(head, "scan ")
	}
	return head + connect.LostCause(serverOf(f), err) + msg[i+len(cause):]
}
