package connect

import (
	"time"

	"github.com/spf13/pflag"
)

// AddFlags defines the connection flags Resolve reads; duration defines the durations (nil: pflag's).
func AddFlags(pf *pflag.FlagSet, configPath string, duration func(fs *pflag.FlagSet, name string, def time.Duration, usage string)) {
	if duration == nil {
		duration = func(fs *pflag.FlagSet, name string, def time.Duration, usage string) { fs.Duration(name, def, usage) }
	}
	pf.String("url", DefaultURL, "Redis URL: host:port, redis://[user@]host:port[/db], rediss:// for TLS, unix:///path.sock (no password: see REDISCLI_AUTH)")
	pf.StringSlice("cluster", nil, "Redis Cluster seed addresses host:port[,host:port] (instead of --url)")
	pf.String("sentinel-master", "", "Sentinel master name (with --sentinel-addrs)")
	pf.StringSlice("sentinel-addrs", nil, "Sentinel addresses host:port[,host:port]")
	pf.String("sentinel-user", "", "user for the sentinels themselves, if they need AUTH (password from BUCKETCTL_SENTINEL_PASSWORD)")
	pf.String("user", "", "ACL user name (password from REDISCLI_AUTH or BUCKETCTL_PASSWORD)")
	pf.String("tls-ca", "", "CA certificate file (PEM) to verify the server")
	pf.String("tls-cert", "", "client certificate file (PEM) for mutual TLS")
	pf.String("tls-key", "", "client key file (PEM) for mutual TLS")
	pf.Bool("insecure-skip-verify", false, "INSECURE: do not verify the server's TLS certificate")
	duration(pf, "dial-timeout", 5*time.Second, "time allowed for the TCP (and TLS) connection")
	duration(pf, "timeout", 3*time.Second, "longest wait for Redis: each request, the connection's handshake included; "+
		"a one-key command (inspect, check, consume, reset KEY) ends within it (never retried)")
	pf.String("context", "", "named context from the config file (typed, it wins over BUCKETCTL_URL and the other variables)")
	pf.String("config", "", "config file (default "+configPath+")")
}
