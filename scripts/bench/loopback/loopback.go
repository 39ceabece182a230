// Package loopback is the rule the bench commands share for their -addr flag: they only
// ever load a redis-server on this machine, never one reached over a network.
package loopback

import (
	"flag"
	"fmt"
	"net"
	"os"
)

// Flag registers -addr on the command line's flag set: the redis-server's host:port,
// loopback only (default 127.0.0.1:6379). Check it after flag.Parse.
func Flag() *string {
	return flag.String("addr", "127.0.0.1:6379", "redis-server (loopback only)")
}

// Check exits with status 2, saying so under the command's name, when addr is not a
// loopback host:port.
func Check(command, addr string) {
	if !IsLoopback(addr) {
		fmt.Fprintf(os.Stderr, "%s: -addr must be a loopback host:port\n", command)
		os.Exit(2)
	}
}

// IsLoopback says whether addr is a host:port whose host is 127.0.0.1, localhost or ::1.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && (host == "127.0.0.1" || host == "localhost" || host == "::1")
}
