package connect

import (
	"fmt"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/tui/format"
)

// Server describes the one server a command talks to, resolved from flags, environment and
// the config file's context (see Resolve): exactly one of URL, Cluster or SentinelMaster
// with SentinelAddrs names it. Its passwords are kept unexported, so printing a Server
// never shows them.
type Server struct {
	// Context is the context that named the server, "" when a flag or variable did.
	Context        string
	URL            string
	Cluster        []string
	SentinelMaster string
	SentinelAddrs  []string
	// SentinelUser and its password (BUCKETCTL_SENTINEL_PASSWORD or the context's
	// sentinel-password-env) authenticate to the sentinels; by default none is sent, since
	// sentinels usually have no ACL users of the data nodes.
	SentinelUser     string
	sentinelPassword string
	// master records the address a Sentinel failover client dialled: the master in use.
	master             *dialedAddr
	User               string
	password           string
	TLSCA              string
	TLSCert            string
	TLSKey             string
	InsecureSkipVerify bool
	// InsecureSource says where InsecureSkipVerify came from: the flag, its variable or
	// a context, for the warning every run that skips verification prints.
	InsecureSource string
	DialTimeout    time.Duration
	// Timeout bounds each request, the connection's handshake included (see NewClient).
	Timeout  time.Duration
	PoolSize int
	// BoundByContext makes every request end at its context's deadline too: for a
	// command whose whole run has one deadline (a one-key command). Live views and load
	// keep per-request limits only, and their short fetch deadlines do not cut requests.
	BoundByContext bool
}

// Addr names where we connect, without credentials, for messages.
func (s *Server) Addr() string {
	if len(s.Cluster) > 0 || s.SentinelMaster != "" {
		return describeServer(s.Cluster, s.SentinelMaster, s.SentinelAddrs, "")
	}
	if u, err := parseURL(s.URL); err == nil {
		return u.opt.Addr // go-redis's default port added; a socket's path
	}
	return RedactValue(s.URL)
}

// describeServer names a server given as a Cluster's seeds, a Sentinel's master and
// addresses, or a URL, without credentials: the one wording of messages and listings.
func describeServer(cluster []string, master string, sentinels []string, url string) string {
	switch {
	case len(cluster) > 0:
		return "cluster " + RedactValue(strings.Join(cluster, ","))
	case master != "":
		return fmt.Sprintf("sentinel master %q via %s", master, RedactValue(strings.Join(sentinels, ",")))
	}
	return RedactValue(url)
}

// Label is the address and, when one named it, the context: what a view names.
func (s *Server) Label() string {
	if s.Context != "" {
		return s.Addr() + " (context " + format.SafeText(s.Context) + ")"
	}
	return s.Addr()
}

// Master is the master a Sentinel client dialled last ("?" before it dialled, or when the
// server is not Sentinel).
func (s *Server) Master() string { return s.master.get() }

// InsecureWarning is the one line a run that does not verify the server's TLS certificate
// prints on stderr, naming where the setting came from; "" when it verifies.
func (s *Server) InsecureWarning() string {
	if !s.InsecureSkipVerify {
		return ""
	}
	return fmt.Sprintf("bucketctl: warning: the server's TLS certificate is not verified (%s): anyone on the path can pose as %s and read the traffic; give the CA with --tls-ca instead",
		format.SafeText(s.InsecureSource), format.SafeText(s.Addr()))
}
