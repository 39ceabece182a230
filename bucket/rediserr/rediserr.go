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
// client in (network, timeout, TLS, WRONGPASS, NOAUTH), not an error reply to a command.
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

// IsNetwork reports whether err is a network error rather than a reply from the server.
func IsNetwork(err error) bool {
	var ne net.Error
	return IsLost(err) || errors.As(err, &ne)
}

// IsLost reports whether err is a connection lost before the reply: EOF, reset or broken.
func IsLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// ReloadSlots refreshes a Cluster client's slot map after a network error (no MOVED comes).
func ReloadSlots(rdb redis.UniversalClient, err error) {
	if c, ok := rdb.(*redis.ClusterClient); ok && IsNetwork(err) {
		c.ReloadState(context.Background())
	}
}

// NotSent reports whether an error came before the command was written, so the server
// cannot have run it: a failed dial, no connection from the pool, the context ending.
func NotSent(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op == "dial"
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// IsTimeout reports whether a server reached did not answer in time (not one unreached).
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

// LazyRegexp compiles expr on first use, not at every command's start-up.
func LazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

var (
	quotedCommand = LazyRegexp(`'([^' ]+)' command`)
	scriptLine    = LazyRegexp(`script: ([0-9a-f]{40}), on @user_script:(\d+)`)
	luaCall       = LazyRegexp(`redis\.p?call\(\s*'([A-Za-z]+)'`)
)

// ACLDenial is what a server's ACL refused: a command sent directly, or one a script calls.
type ACLDenial struct {
	Command  string // lower case ("evalsha", "script|load"); "": allowed, but not on its keys
	InScript bool   // a script called Command
	Script   string // the script, when one of bucketctl's ("token_bucket", "reset")
}

// Denied reports whether err is a refusal by the server's ACL, and what was refused.
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
	scriptTrailer = LazyRegexp(`\.? script: [0-9a-f]{40}, on @user_script:\d+\.?$`)
	refusalCode   = LazyRegexp(`(?:^|[\s-])(NOREPLICAS|READONLY|OOM|MISCONF) `)
)

// ReplyText is an error's text without the script SHA1 and line Redis 7 appends.
func ReplyText(err error) string {
	return scriptTrailer().ReplaceAllString(err.Error(), "")
}

// Refusal names why a server refuses every write alike, whatever the key: NOREPLICAS,
// READONLY, OOM, MISCONF or NOPERM; "" for any other error.
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
