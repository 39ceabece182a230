package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// Exit codes, documented in `bucketctl help exit-codes` and the README.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitUnreachable = 3
	ExitDenied      = 4
	ExitInterrupted = 130
)

const exitCodesHelp = `bucketctl exits with:

  0    success; for check and consume: the request is (or would be) allowed
  1    error: Redis answered with an error, a key is not a bucket, a write was refused
  2    usage: a bad flag, argument or config value; nothing was sent to Redis
  3    Redis unreachable: cannot connect, resolve, authenticate or complete the TLS handshake
  4    denied: check or consume found too few tokens (the request is rate-limited)
  130  interrupted (Ctrl-C)

Scripts can branch on 4 without parsing output:

  if bucketctl consume rate:user:42 --capacity 10 --rate 5; then work; else [ $? -eq 4 ] && backoff; fi`

// UsageError is a problem with flags, arguments or config: exit 2, and nothing touched Redis.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usagef returns a UsageError.
func usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// UnreachableError is a failure to connect or authenticate to Redis at Addr.
type UnreachableError struct {
	Addr string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach Redis at %s: %s", e.Addr, describeConnErr(e.Err))
}
func (e *UnreachableError) Unwrap() error { return e.Err }

// DeniedError reports a rate-limited check or consume: exit 4, output already printed.
type DeniedError struct{ Key string }

func (e *DeniedError) Error() string { return fmt.Sprintf("%s: denied (rate-limited)", e.Key) }

// SilentError carries an exit code for a failure already reported on stderr.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

func describeConnErr(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "invalid password"):
		return msg + " (set the password in REDISCLI_AUTH or BUCKETCTL_PASSWORD, the user with --user)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (is redis-server running there? check --url or the context)"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timed out (raise --dial-timeout, or check the address and firewall)"
	}
	return msg
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	var (
		ue *UsageError
		re *UnreachableError
		de *DeniedError
		se *SilentError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.Code
	case errors.As(err, &de):
		return ExitDenied
	case errors.As(err, &ue), errors.Is(err, bucket.ErrInvalid):
		return ExitUsage
	case errors.As(err, &re):
		return ExitUnreachable
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case isConnectionError(err):
		return ExitUnreachable
	}
	return ExitError
}

// isConnectionError recognises errors of the network or the handshake, as opposed to a
// Redis error reply.
func isConnectionError(err error) bool {
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH") ||
		strings.Contains(msg, "tls:") || strings.Contains(msg, "x509:") ||
		strings.Contains(msg, "connection pool timeout") || strings.Contains(msg, "i/o timeout")
}

// errorLine is the one line printed on stderr for err.
func errorLine(err error) string {
	msg := err.Error()
	var ue *UsageError
	if errors.As(err, &ue) || errors.Is(err, bucket.ErrInvalid) {
		msg = strings.TrimPrefix(msg, bucket.ErrInvalid.Error()+": ")
	}
	msg = strings.ReplaceAll(msg, "\n", "; ")
	return "bucketctl: " + msg
}
