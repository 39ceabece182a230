package loopback

import (
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/redis/go-redis/v9"
)

// Client registers -addr (the redis-server's host:port, loopback only, default
// 127.0.0.1:6379), parses the command line and returns a client of pool connections to
// that server that never retries. Call it after the command's own flags are declared. It
// exits with status 2, saying so under the command's name, when -addr is not loopback.
func Client(command string, pool int) *redis.Client {
	addr := flag.String("addr", "127.0.0.1:6379", "redis-server (loopback only)")
	flag.Parse()
	if !IsLoopback(*addr) {
		fmt.Fprintf(os.Stderr, "%s: -addr must be a loopback host:port\n", command)
		os.Exit(2)
	}
	return redis.NewClient(&redis.Options{Addr: *addr, PoolSize: pool, MaxRetries: -1})
}

// IsLoopback says whether addr is a host:port whose host is 127.0.0.1, localhost or ::1.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && (host == "127.0.0.1" || host == "localhost" || host == "::1")
}
