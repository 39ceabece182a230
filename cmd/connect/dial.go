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
