package cmd

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// checkAddrs refuses addresses that cannot name a server (too many colons, no port number)
// before anything is dialled: a typo is a usage error (exit 2), not "cannot reach" (3).
func (f *Factory) checkAddrs(o *ConnOptions) error {
	for _, a := range o.Cluster {
		if err := checkHostPort(a); err != nil {
			return usagef("%s %s: %s (use host:port,host:port)", f.source("cluster", o.Context), safe(a), err)
		}
	}
	for _, a := range o.SentinelAddrs {
		if err := checkHostPort(a); err != nil {
			return usagef("%s %s: %s (use host:port,host:port)", f.source("sentinel-addrs", o.Context), safe(a), err)
		}
	}
	if len(o.Cluster) > 0 || o.SentinelMaster != "" {
		return nil
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil // NewClient's parse says what is wrong, without the password
	}
	host := u.Host
	if u.Port() == "" && !strings.HasSuffix(host, ":") {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "6379")
	}
	if err := checkHostPort(host); err != nil {
		return usagef("%s %s: %s (use host:port, redis://host:port/db, rediss://host:port or unix:///path/to/socket)",
			f.source("url", o.Context), redactURL(o.URL), err)
	}
	return nil
}

// checkHostPort says what is wrong with a host:port, or nil.
func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			return errors.New(ae.Err)
		}
		return err
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return errors.New("the host has a colon but is no IPv6 address")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return errors.New("the port " + strconv.Quote(port) + " is not a number from 1 to 65535")
	}
	return nil
}

// serverRefusal turns a first reply that refuses the connection's settings into a usage
// error naming the setting to fix: the server answered, so it is not "unreachable". Other
// errors are returned as they are.
func (f *Factory) serverRefusal(o *ConnOptions, err error) error {
	var re redis.Error
	if !errors.As(err, &re) {
		return err
	}
	msg := re.Error()
	switch {
	case strings.Contains(msg, "DB index is out of range"):
		db := "?"
		if opt, perr := redis.ParseURL(o.URL); perr == nil {
			db = strconv.Itoa(opt.DB)
		}
		return usagef("%s %s: the server has no database %s (%s): CONFIG GET databases says how many it has (16 unless set)",
			f.source("url", o.Context), redactURL(o.URL), db, msg)
	case strings.Contains(msg, "cluster support disabled"):
		return usagef("%s %s: not a Cluster node (%s): for a standalone server use --url", f.source("cluster", o.Context),
			strings.Join(o.Cluster, ","), msg)
	}
	return err
}
