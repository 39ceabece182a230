package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/cmd/connect"
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
	ExitNoKey       = 6
	ExitInterrupted = 130
)

// The connection's errors: see package connect.
type (
	UsageError       = connect.UsageError
	UnreachableError = connect.UnreachableError
	PermissionError  = connect.PermissionError
)

func usagef(format string, a ...any) error { return connect.Usagef(format, a...) }

// NoKeyError reports keys named on the command line that do not exist: exit 6.
type NoKeyError struct{ Keys []string }

func (e *NoKeyError) Error() string {
	const hint = " (misspelt, or a bucket that expired full or was refilled by a reset that deletes: " +
		"a bucket's key expires once it has refilled, and a missing bucket reads as full)"
	if len(e.Keys) == 1 {
		return "no such key: " + format.QuoteKey(e.Keys[0]) + hint
	}
	quoted := make([]string, 0, 3)
	for _, k := range e.Keys[:min(3, len(e.Keys))] {
		quoted = append(quoted, format.QuoteKey(k))
	}
	more := ""
	if len(e.Keys) > 3 {
		more = fmt.Sprintf(" and %d more", len(e.Keys)-3)
	}
	return fmt.Sprintf("%d keys do not exist: %s%s%s", len(e.Keys), strings.Join(quoted, ", "), more, hint)
}

// DeniedError reports a rate-limited check or consume: exit 4, output already printed.
type DeniedError struct{ Key string }

func (e *DeniedError) Error() string { return fmt.Sprintf("%s: denied (rate-limited)", e.Key) }

// SilentError carries an exit code for a failure already reported on stderr.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	var (
		ue *UsageError
		re *UnreachableError
		de *DeniedError
		se *SilentError
		we *WriteError
		nk *NoKeyError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &se):
		return se.Code
	case errors.As(err, &de):
		return ExitDenied
	case errors.As(err, &nk):
		return ExitNoKey
	case errors.As(err, &we):
		return ExitError // the server answered, and refused
	case errors.As(err, &ue), errors.Is(err, bucket.ErrInvalid), errors.Is(err, bucket.ErrUndeclared):
		return ExitUsage
	case connect.IsPermission(err), connect.IsAuth(err):
		return ExitError // refused by ACL or AUTH: the server answered
	case errors.As(err, &re):
		return ExitUnreachable
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case rediserr.IsUnreachable(err):
		return ExitUnreachable
	}
	return ExitError
}

// errorMessage is what err says to the user, on one line (see Factory.errText).
func errorMessage(err error) string {
	msg := err.Error()
	var ue *UsageError
	if errors.As(err, &ue) || errors.Is(err, bucket.ErrInvalid) {
		msg = strings.TrimPrefix(msg, bucket.ErrInvalid.Error()+": ")
	}
	var re *UnreachableError
	if errors.As(err, &re) && connect.IsAuth(re.Err) {
		msg = re.Error() // the refusal alone, not the step that met it
	}
	if a := adviceFor(err); a != "" && !strings.Contains(msg, a) {
		msg += ": " + a
	}
	return strings.ReplaceAll(msg, "\n", "; ")
}

// adviceFor is what the user can do about err, in the command line's words.
func adviceFor(err error) string {
	switch {
	case connect.IsReplyTimeout(err):
		return "raise --timeout, or check the server's load"
	case errors.Is(err, bucket.ErrNoSpec):
		return specAdvice
	case errors.Is(err, bucket.ErrUndeclared):
		var ke *bucket.KeyError
		layout := ""
		if errors.As(err, &ke) {
			layout = ke.Layout
		}
		return "to change it, " + format.DeclareHint(layout)
	}
	return ""
}

// specAdvice is how a bucket whose capacity and rate are unknown gets them.
const specAdvice = "pass --capacity and --rate, or add a rule"
