package sandbox

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// recentPorts remembers ports FreePort handed out lately, so that concurrent
// callers in one process (a test starting six cluster nodes at once) do not
// get the same port twice while none of them has bound it yet.
var recentPorts = struct {
	sync.Mutex
	at map[int]time.Time
}{at: map[int]time.Time{}}

const recentPortTTL = time.Minute

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago: it
// listens on port 0, reads the port the kernel chose and closes the listener.
// Another process may take the port before the caller binds it, so callers
// must be ready to retry with a new port (StartRedis does).
func FreePort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("sandbox: pick a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if err := l.Close(); err != nil {
			return 0, fmt.Errorf("sandbox: pick a free port: %w", err)
		}
		if claimPort(port) {
			return port, nil
		}
	}
	return 0, errors.New("sandbox: pick a free port: the kernel kept returning ports handed out a moment ago")
}

func claimPort(port int) bool {
	recentPorts.Lock()
	defer recentPorts.Unlock()
	now := time.Now()
	for p, at := range recentPorts.at {
		if now.Sub(at) > recentPortTTL {
			delete(recentPorts.at, p)
		}
	}
	if _, taken := recentPorts.at[port]; taken {
		return false
	}
	recentPorts.at[port] = now
	return true
}
