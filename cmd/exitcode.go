package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Exit codes, documented in `bucketctl help exit-codes` and the README.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitUnreachable = 3
	ExitDenied      = 4
	ExitFindings    = 5
	ExitInterrupted = 130
)

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
	return fmt.Sprintf("cannot reach Redis at %s: %s", e.Addr, describeConnErr(e.Addr, e.Err))
}
func (e *UnreachableError) Unwrap() error { return e.Err }

// PermissionError is a command the server's ACL does not allow the user (NOPERM): the
// server is reachable, so it is exit 1, not 3.
type PermissionError struct {
	User   string
	Denial bucket.ACLDenial
	Err    error
}

func (e *PermissionError) Error() string {
	what := "run " + e.Denial.Command
	if e.Denial.Command == "" {
		what = "use these keys"
	}
	if e.Denial.InScript {
		script := "a script"
		if e.Denial.Script != "" {
			script = "bucketctl's " + e.Denial.Script + " script"
		}
		what += ", called by " + script + " (ACLs apply inside scripts),"
	}
	return fmt.Sprintf("user %s may not %s on this server (NOPERM): grant it, or use a user with the runbook ACL (see 'bucketctl help cluster')", e.User, what)
}
func (e *PermissionError) Unwrap() error { return e.Err }

// DeniedError reports a rate-limited check or consume: exit 4, output already printed.
type DeniedError struct{ Key string }

func (e *DeniedError) Error() string { return fmt.Sprintf("%s: denied (rate-limited)", e.Key) }

// SilentError carries an exit code for a failure already reported on stderr.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// describeConnErr explains a failure to reach addr (as ConnOptions.Addr names it).
func describeConnErr(addr string, err error) string {
	msg := err.Error()
	server, flag := "redis-server", "--url"
	switch {
	case strings.HasPrefix(addr, "cluster "):
		flag = "--cluster"
	case strings.HasPrefix(addr, "sentinel "):
		server, flag = "redis-sentinel", "--sentinel-addrs"
	}
	auth := strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "invalid password")
	switch {
	case auth && strings.HasPrefix(addr, "sentinel ") && strings.Contains(msg, "all sentinels"):
		// The sentinels refused: they have credentials of their own.
		return msg + " (set the sentinels' password in BUCKETCTL_SENTINEL_PASSWORD or the context's sentinel-password-env, their user with --sentinel-user)"
	case auth:
		return msg + " (set the password in REDISCLI_AUTH or BUCKETCTL_PASSWORD, the user with --user)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connection refused (is %s running there? check %s or the context)", server, flag)
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timed out (raise --dial-timeout or --timeout, or check the address, the firewall and the server's load)"
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
		pe *PermissionError
		we *WriteError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.Code
	case errors.As(err, &de):
		return ExitDenied
	case errors.As(err, &we):
		// The server answered, and refused: not "unreachable", and not a usage error
		// (the request reached Redis).
		return ExitError
	case errors.As(err, &ue), errors.Is(err, bucket.ErrInvalid):
		return ExitUsage
	case errors.As(err, &pe), redis.IsPermissionError(err):
		// Refused by ACL: the server answered, so it is not "unreachable".
		return ExitError
	case errors.As(err, &re):
		return ExitUnreachable
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case bucket.IsUnreachable(err):
		return ExitUnreachable
	}
	return ExitError
}

// errorLine is the one line printed on stderr for err.
func errorLine(err error) string {
	msg := err.Error()
	var ue *UsageError
	if errors.As(err, &ue) || errors.Is(err, bucket.ErrInvalid) {
		msg = strings.TrimPrefix(msg, bucket.ErrInvalid.Error()+": ")
	}
	var (
		re *UnreachableError
		ce *bucket.UncertainError
	)
	if isTimeout(err) && !errors.As(err, &re) && !errors.As(err, &ce) {
		msg = "no reply from Redis within --timeout (" + msg + ")"
	}
	msg = strings.ReplaceAll(msg, "\n", "; ")
	// An error may quote what the user typed or what the server said: no escape sequence
	// in it reaches the terminal.
	return "bucketctl: " + format.SafeText(msg)
}
