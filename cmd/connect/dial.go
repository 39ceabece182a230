package connect

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Check says how Dial makes sure the server answers before a command relies on it.
type Check int

const (
	// PingFirst sends a PING of its own.
	PingFirst Check = iota
	// PingByPipeline sends the PING by a pipeline, for a command that talks to Redis by
	// pipelines only (watch of given keys). (Pipelines and commands share one pool, see
	// NewClient, so it costs what PingFirst does.)
	PingByPipeline
	// PingInFirstRead makes no round trip at Dial: the PING rides in the command's first
	// pipeline, ahead of its reads, for a command that makes one pipelined read and ends
	// (inspect of given keys). It fails as a PING of its own would (see firstPipeline).
	PingInFirstRead
)

// Dial builds the client and checks that the server answers, within ctx (whose deadline
// the caller sets: see Factory.Redis), so an unreachable or misconfigured server is
// reported once, with its address and the cause. (PingByPipeline and PingInFirstRead are
// for standalone servers only: a Sentinel client's pipeline reports a down sentinel as a
// timeout rather than the refused connection.)
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

// dialError is what a failed reachability PING says: the ACL's refusal as it is, the
// server's refusal of a setting, or "cannot reach ADDR: cause".
func (s *Server) dialError(ctx context.Context, err error) error {
	var pe *PermissionError
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return ctx.Err()
	case errors.As(err, &pe):
		// The server answered: it is reachable, the user may not PING.
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

// firstPipeline puts the reachability PING in the client's first pipeline, ahead of the
// command's reads, so a one-key inspect makes two round trips (go-redis's HELLO, then the
// pipeline) where a PING of its own made three. When the PING fails, every command of the
// pipeline fails with what Dial would have said (see dialError); an ACL refusal of the PING
// is left for aclHook to name.
type firstPipeline struct {
	s    *Server
	done atomic.Bool
}

func (*firstPipeline) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*firstPipeline) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *firstPipeline) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.done.Load() {
			return next(ctx, cmds)
		}
		ping := redis.NewStatusCmd(ctx, "ping")
		err := next(ctx, append([]redis.Cmder{ping}, cmds...))
		perr := ping.Err()
		if perr == nil && ping.Val() != "PONG" {
			// The connection failed before the PING was sent (a refused password):
			// go-redis says so in the pipeline's error only.
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

// serverRefusal turns a first reply that refuses the connection's settings into a usage
// error naming the setting to fix: the server answered, so it is not "unreachable". Other
// errors are returned as they are.
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

// NodeOf returns a function naming the master that serves a key: the slot's master for a
// Cluster (from go-redis's cached slot map: no round trip), the master a Sentinel client
// dialled, or the one server.
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

// quietLogger drops go-redis's internal log lines: errors reach the user once, as the
// command's own one-line message.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}

// QuietLogs silences go-redis's own logging, process-wide.
func QuietLogs() { redis.SetLogger(quietLogger{}) }
