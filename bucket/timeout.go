package bucket

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
)

// IsTimeout reports whether err is a server that was reached but did not answer in time (a
// read or write timeout, a deadline, a saturated connection pool), as opposed to one that
// could not be reached at all (refused, reset, a dial that timed out, TLS, auth). A live
// view calls the first "slow" and only the second "unreachable".
func IsTimeout(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	if strings.Contains(msg, "dial") {
		return false // no connection was made: unreachable
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "connection pool timeout")
}
