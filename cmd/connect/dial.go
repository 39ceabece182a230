package connect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Check says how Dial makes sure the server answers before a command relies on it.
type Check int

// A PING of its own, by a pipeline (watch), or in the command's first pipeline (inspect).
const (
	PingFirst Check = iota
	PingByPipeline
	PingInFirstRead
)

// Dial builds the client and checks, within ctx, that the server answers. Other clients
// than standalone ones always PingFirst (a Sentinel pipeline hides a refused connection).
func (s *Server) Dial(ctx context.Context, check Check) (bucket.Client, error) {
	c, err := s.NewClient()
	if err != nil {
		return nil, err
	}
	rc, standalone := c.(*redis.Client)
	if !standalone || s.SentinelMaster != "" {
		check = PingFirst
	}
	switch check {
	case PingInFirstRead:
		rc.AddHook(&firstPipeline{s: s})
		return c, nil
	case PingByPipeline:
		var cmd *redis.StatusCmd
		_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			cmd = p.Ping(ctx)
			return nil
		})
		if err == nil {
			err = cmd.Err()
		}
	default:
		err = c.Ping(ctx).Err()
	}
	if err != nil {
		_ = c.Close()
		return nil, s.dialError(ctx, err)
	}
	return c, nil
}

func (s *Server) dialError(ctx context.Context, err error) error {
	var pe *PermissionError
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return ctx.Err()
	case errors.As(err, &pe):
		return err
	}
	if refused := s.serverRefusal(err); refused != err {
		return refused
	}
	if plain := s.plainTextPort(err); plain != nil {
		err = plain
	}
	return &UnreachableError{Addr: s.Addr(), User: s.User, Err: err}
}

// firstPipeline puts the reachability PING ahead of the first pipeline's reads (a round
// trip saved); when it fails, every command fails with what Dial would have said.
type firstPipeline struct {
	passHook
	s    *Server
	done atomic.Bool
}

func (h *firstPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.done.Load() {
			return next(ctx, cmds)
		}
		ping := redis.NewStatusCmd(ctx, "ping")
		err := next(ctx, append([]redis.Cmder{ping}, cmds...))
		perr := ping.Err()
		if perr == nil && ping.Val() != "PONG" {
			// Failed before the PING was sent: only the pipeline's error says why.
			perr = err
		}
		if perr == nil {
			h.done.Store(true)
			return err
		}
		if _, denied := rediserr.Denied(perr); !denied {
			perr = h.s.dialError(ctx, perr)
		}
		for _, c := range cmds {
			c.SetErr(perr)
		}
		return perr
	}
}

// serverRefusal turns a reply refusing a setting (a database, Cluster mode) into a usage error.
func (s *Server) serverRefusal(err error) error {
	var re redis.Error
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Error()
	where := func(key string) string {
		if s.Context != "" {
			return "context " + strconv.Quote(s.Context) + "'s " + key
		}
		return "--" + key
	}
	switch {
	case strings.Contains(msg, "DB index is out of range"):
		db := "?"
		if u, perr := parseURL(s.URL); perr == nil {
			db = strconv.Itoa(u.opt.DB)
		}
		return Usagef("%s %s: the server has no database %s (%s): CONFIG GET databases says how many it has (16 unless set)",
			where("url"), RedactValue(s.URL), db, msg)
	case strings.Contains(msg, "cluster support disabled"):
		return Usagef("%s %s: not a Cluster node (%s): for a standalone server use --url", where("cluster"),
			RedactValue(strings.Join(s.Cluster, ",")), msg)
	}
	return err
}

// NodeOf returns a function naming the master that serves a key.
func (s *Server) NodeOf(ctx context.Context, c bucket.Client) func(key string) string {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return func(key string) string {
			m, err := cc.MasterForKey(ctx, key)
			if err != nil {
				return "?"
			}
			return m.Options().Addr
		}
	}
	if s.SentinelMaster != "" {
		return func(string) string { return s.master.get() }
	}
	addr := s.Addr()
	return func(string) string { return addr }
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

// QuietLogs silences go-redis's own logging: errors reach the user as one line.
func QuietLogs() { redis.SetLogger(quietLogger{}) }

// UsageError is bad flags, arguments, environment or config file (exit 2; Redis untouched).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// UnreachableError is a failure to connect or authenticate to Redis at Addr, as User
// ("" the default user). A refused password (IsAuth) says so: the server was reached.
type UnreachableError struct {
	Addr string
	User string
	Err  error
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func (e *UnreachableError) Error() string {
	switch {
	case IsAuth(e.Err):
		return authRefusal(e.Addr, e.User, e.Err)
	case IsReplyTimeout(e.Err): // connected: the reply timed out, not the dial
		return LostCause(e.Addr, e.Err)
	}
	return fmt.Sprintf("cannot reach Redis at %s: %s", e.Addr, describeConnErr(e.Addr, e.Err))
}

// LostCause says why a round trip to server failed, naming the address: never a bare EOF.
func LostCause(server string, err error) string {
	server = LostAddr(server, err)
	switch {
	case rediserr.IsTimeout(err):
		return fmt.Sprintf("Redis at %s did not answer within --timeout (%s)", server, RootText(err))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("the connection to %s was lost before the reply (EOF: closed by the server, a restart, a proxy or a firewall?)", server)
	case rediserr.IsLost(err):
		return fmt.Sprintf("the connection to %s was lost before the reply (%s: closed by the server, a restart, a proxy or a firewall?)", server, RootText(err))
	}
	return fmt.Sprintf("%s: %s", server, format.SafeKey(err.Error()))
}

// LostAddr is the address a round trip to server failed on: the connection's own when err has it.
func LostAddr(server string, err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		server = oe.Addr.String()
	}
	return format.SafeText(server)
}

// IsReplyTimeout reports a server reached that did not answer within --timeout (not a dial).
func IsReplyTimeout(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// RootText is the innermost error's text ("i/o timeout", "connection reset by peer").
func RootText(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return format.SafeKey(err.Error())
		}
		err = next
	}
}

// IsAuth reports a refused (WRONGPASS) or missing (NOAUTH) password.
func IsAuth(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "invalid password")
}

func authRefusal(addr, user string, err error) string {
	const fix = "set the password in REDISCLI_AUTH or BUCKETCTL_PASSWORD (or the context's password-env), the user with --user"
	if strings.HasPrefix(addr, "sentinel ") && strings.Contains(err.Error(), "all sentinels") {
		return fmt.Sprintf("Redis at %s: the sentinels refused the client (NOAUTH or WRONGPASS): "+
			"set the sentinels' password in BUCKETCTL_SENTINEL_PASSWORD or the context's sentinel-password-env, their user with --sentinel-user", addr)
	}
	if strings.Contains(err.Error(), "NOAUTH") {
		return fmt.Sprintf("Redis at %s requires a password and none was sent (NOAUTH): %s", addr, fix)
	}
	return fmt.Sprintf("Redis at %s refused the password for user %s (WRONGPASS: a wrong password, or no such user, or a disabled one): %s", addr, cmp.Or(user, "default"), fix)
}

func describeConnErr(addr string, err error) string {
	msg := err.Error()
	server, flag := "redis-server", "--url"
	switch {
	case strings.HasPrefix(addr, "cluster "):
		flag = "--cluster"
	case strings.HasPrefix(addr, "sentinel "):
		server, flag = "redis-sentinel", "--sentinel-addrs"
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("connection refused (is %s running there? check %s or the context)", server, flag)
	case errors.Is(err, context.DeadlineExceeded), IsTimeout(err):
		return "timed out (raise --dial-timeout or --timeout, or check the address, the firewall and the server's load)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "the connection was lost before the reply (" + msg + ": closed by the server, a restart, a proxy or a firewall?)"
	}
	return msg
}

// IsTimeout reports a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// PermissionError is a command the server's ACL refuses the user (NOPERM): exit 1, not 3.
type PermissionError struct {
	User   string
	Denial rediserr.ACLDenial
	Err    error
}

func (e *PermissionError) Unwrap() error { return e.Err }

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

// IsPermission reports a refusal by the server's ACL (NOPERM), wrapped or not.
func IsPermission(err error) bool {
	var pe *PermissionError
	return errors.As(err, &pe) || redis.IsPermissionError(err)
}

// passHook passes every call on: a hook embeds it and overrides what it changes.
type passHook struct{}

func (passHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (passHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (passHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// aclHook turns a refusal by ACL (NOPERM) into a PermissionError naming user and command.
type aclHook struct {
	passHook
	user string
}

func (h aclHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return h.wrap(next(ctx, cmd)) }
}

func (h aclHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if w := h.wrap(c.Err()); w != c.Err() {
				c.SetErr(w)
			}
		}
		return h.wrap(err)
	}
}

func (h aclHook) wrap(err error) error {
	var pe *PermissionError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	if d, ok := rediserr.Denied(err); ok {
		return &PermissionError{User: h.user, Denial: d, Err: err}
	}
	return err
}
