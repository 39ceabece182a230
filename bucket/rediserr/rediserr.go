package rediserr

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// IsUnreachable reports whether err means Redis could not be reached or would not let the
// client in (network, timeout, closed client, TLS, WRONGPASS, NOAUTH), as opposed to an
// error reply to a command: exit 3, "Redis unreachable" in the live views.
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	if IsNetwork(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrClosed) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"WRONGPASS", "NOAUTH", "tls:", "x509:", "connection pool timeout", "i/o timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// IsNetwork reports whether err is a network error (a connection lost, refused or timed
// out) rather than a reply from the server.
func IsNetwork(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne))
}

// ReloadSlots asks a Cluster client to refresh its slot map after a network error, since a
// dead node sends no MOVED and go-redis's periodic reload comes every 60 s.
func ReloadSlots(rdb redis.UniversalClient, err error) {
	if c, ok := rdb.(*redis.ClusterClient); ok && IsNetwork(err) {
		c.ReloadState(context.Background())
	}
}

// NotSent reports whether an error came before the command was written, so the server
// cannot have run it: a failed dial, no connection from the pool, or the context ending
// while waiting for one (once written, a deadline is a connection timeout: uncertain).
func NotSent(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op == "dial"
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// IsTimeout reports whether err is a server reached that did not answer in time (a live
// view's "slow"), as opposed to one not reached at all (refused, a dial timeout, TLS, auth).
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

// lazyRegexp compiles expr on first use, not at start-up of every command.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var (
	quotedCommand = lazyRegexp(`'([^' ]+)' command`)
	scriptLine    = lazyRegexp(`script: ([0-9a-f]{40}), on @user_script:(\d+)`)
	luaCall       = lazyRegexp(`redis\.p?call\(\s*'([A-Za-z]+)'`)
)

// ACLDenial is what a server's ACL refused: a command sent directly (a NOPERM reply), or a
// command one of bucketctl's scripts calls, since ACLs apply inside scripts too.
type ACLDenial struct {
	// Command is the refused command in lower case ("evalsha", "script|load"), or "" when
	// the command was allowed but not on its keys.
	Command  string
	InScript bool   // a script called Command
	Script   string // the script, when one of bucketctl's ("token_bucket", "reset")
}

// Denied reports whether err is a refusal by the server's ACL, and what was refused (a
// script's command read from its source at the line Redis 7.0 names).
func Denied(err error) (ACLDenial, bool) {
	if err == nil {
		return ACLDenial{}, false
	}
	msg := err.Error()
	d := ACLDenial{InScript: strings.Contains(msg, "The user executing the script") || strings.Contains(msg, "ACL failure in script")}
	if !d.InScript && !redis.IsPermissionError(err) {
		return d, false
	}
	if m := quotedCommand().FindStringSubmatch(msg); m != nil {
		d.Command = strings.ToLower(m[1])
	}
	refusedCommand := d.InScript && strings.Contains(msg, "run this command") // not its keys
	if m := scriptLine().FindStringSubmatch(msg); d.InScript && m != nil {
		sc, known := scripts.BySHA()[m[1]]
		d.Script = sc.Name
		if known && refusedCommand && d.Command == "" {
			d.Command = commandAt(sc.Src, m[2])
		}
	}
	if refusedCommand && d.Command == "" {
		d.Command = "a command"
	}
	return d, true
}

// commandAt returns the command that line n of a script's source calls, or "".
func commandAt(src, n string) string {
	lines := strings.Split(src, "\n")
	i, _ := strconv.Atoi(n)
	if i < 1 || i > len(lines) {
		return ""
	}
	if c := luaCall().FindStringSubmatch(lines[i-1]); c != nil {
		return strings.ToLower(c[1])
	}
	return ""
}

var (
	scriptTrailer = lazyRegexp(`\.? script: [0-9a-f]{40}, on @user_script:\d+\.?$`)
	refusalCode   = lazyRegexp(`(?:^|[\s-])(NOREPLICAS|READONLY|OOM|MISCONF) `)
)

// ReplyText is an error's text without the script SHA1 and line Redis 7 appends to a reply
// raised inside a script.
func ReplyText(err error) string {
	return scriptTrailer().ReplaceAllString(err.Error(), "")
}

// Refusal names why a server refuses every write alike, whatever the key: NOREPLICAS,
// READONLY (a replica), OOM, MISCONF (a failed RDB save) or NOPERM (the ACL); "" for any
// other error. Other keys cannot succeed until the server's state changes.
func Refusal(err error) string {
	if err == nil {
		return ""
	}
	switch _, denied := Denied(err); {
	case denied || redis.IsPermissionError(err):
		return "NOPERM"
	case redis.IsNoReplicasError(err):
		return "NOREPLICAS"
	case redis.IsReadOnlyError(err):
		return "READONLY"
	case redis.IsOOMError(err):
		return "OOM"
	}
	var re redis.Error
	if errors.As(err, &re) {
		if m := refusalCode().FindStringSubmatch(re.Error()); m != nil {
			return m[1]
		}
	}
	return ""
}
