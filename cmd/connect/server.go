package connect

import (
	"fmt"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/tui/format"
)

// Server is the one server a command talks to (see Resolve): one of URL, Cluster or
// SentinelMaster names it. Passwords are unexported, so printing a Server never shows them.
type Server struct {
	Context            string // the context that named the server, if one did
	URL                string
	Cluster            []string
	SentinelMaster     string
	SentinelAddrs      []string
	SentinelUser       string
	sentinelPassword   string
	master             *dialedAddr // the master a Sentinel client dialled
	User               string
	password           string
	TLSCA              string
	TLSCert            string
	TLSKey             string
	InsecureSkipVerify bool
	InsecureSource     string // where InsecureSkipVerify came from, for the warning
	DialTimeout        time.Duration
	Timeout            time.Duration // each request, handshake included
	PoolSize           int
	// BoundByContext ends every request at its context's deadline too (one-key commands).
	BoundByContext bool
}

// Addr names where we connect, without credentials, for messages.
func (s *Server) Addr() string {
	if len(s.Cluster) > 0 || s.SentinelMaster != "" {
		return describeServer(s.Cluster, s.SentinelMaster, s.SentinelAddrs, "")
	}
	if u, err := parseURL(s.URL); err == nil {
		return u.opt.Addr
	}
	return RedactValue(s.URL)
}

// describeServer names a server without credentials: the one wording of messages.
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

// InsecureWarning is the stderr line of a run that does not verify the server's TLS
// certificate; "" when it verifies.
func (s *Server) InsecureWarning() string {
	if !s.InsecureSkipVerify {
		return ""
	}
	return fmt.Sprintf("bucketctl: warning: the server's TLS certificate is not verified (%s): anyone on the path can pose as %s and read the traffic; give the CA with --tls-ca instead",
		format.SafeText(s.InsecureSource), format.SafeText(s.Addr()))
}
