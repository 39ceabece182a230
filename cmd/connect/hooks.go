package connect

import (
	"context"
	"errors"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// aclHook turns a refusal by ACL (NOPERM) into a PermissionError naming user and command.
type aclHook struct{ user string }

func (aclHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h aclHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return h.wrap(next(ctx, cmd)) }
}

func (h aclHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if e := c.Err(); e != nil {
				if w := h.wrap(e); w != e {
					c.SetErr(w)
				}
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
	d, ok := rediserr.Denied(err)
	if !ok {
		return err
	}
	user := h.user
	if user == "" {
		user = "default"
	}
	return &PermissionError{User: user, Denial: d, Err: err}
}

// dialedAddr remembers the address its client dialled last: a Sentinel client's master.
type dialedAddr struct{ addr atomic.Pointer[string] }

func (d *dialedAddr) get() string {
	if d == nil {
		return "?"
	}
	if p := d.addr.Load(); p != nil {
		return *p
	}
	return "?"
}

func (d *dialedAddr) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			a := conn.RemoteAddr().String()
			d.addr.Store(&a)
		}
		return conn, err
	}
}

func (d *dialedAddr) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (d *dialedAddr) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
