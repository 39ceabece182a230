package connect

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
)

// Dial builds the client and checks that the server answers, within ctx (whose deadline
// the caller sets: see Factory.Redis), so an unreachable or misconfigured server is
// reported once, with its address and the cause. pipelined says the command talks to
// Redis by pipelines only, so the check goes by one too (see ping).
func (s *Server) Dial(ctx context.Context, pipelined bool) (bucket.Client, error) {
	c, err := s.NewClient()
	if err != nil {
		return nil, err
	}
	if err := s.ping(ctx, c, pipelined); err != nil {
		_ = c.Close()
		var pe *PermissionError
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			return nil, ctx.Err()
		case errors.As(err, &pe):
			// The server answered: it is reachable, the user may not PING.
			return nil, err
		}
		if refused := s.serverRefusal(err); refused != err {
			return nil, refused
		}
		if plain := s.plainTextPort(err); plain != nil {
			err = plain
		}
		return nil, &UnreachableError{Addr: s.Addr(), Err: err}
	}
	return c, nil
}

// ping checks the server answers. It goes through the connection pool the command will
// use: go-redis keeps pipelines in a pool of their own, so a command that reads only by
// pipelines pings by one and opens one connection, as redis-cli would, not two.
// (Standalone servers only: a Sentinel client's pipeline reports a down sentinel as a
// timeout rather than the refused connection.)
func (s *Server) ping(ctx context.Context, c bucket.Client, pipelined bool) error {
	if _, standalone := c.(*redis.Client); !pipelined || !standalone || s.SentinelMaster != "" {
		return c.Ping(ctx).Err()
	}
	var cmd *redis.StatusCmd
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.Ping(ctx)
		return nil
	})
	if err == nil {
		err = cmd.Err()
	}
	return err
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
			where("url"), Redact(s.URL), db, msg)
	case strings.Contains(msg, "cluster support disabled"):
		return Usagef("%s %s: not a Cluster node (%s): for a standalone server use --url", where("cluster"),
			Redact(strings.Join(s.Cluster, ",")), msg)
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
