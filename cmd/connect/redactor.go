package connect

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// minSecretLen is the shortest secret replaced by value in free text (shorter ones would
// garble messages; in an address a secret is hidden by position).
const minSecretLen = 4

// Redactor hides, in a message, every secret it knows by value and every secret Redact
// finds by its form.
type Redactor struct{ secrets []string }

// Add records a secret and the forms a message may quote it in.
func (r *Redactor) Add(s string) {
	if len(s) < minSecretLen {
		return
	}
	r.secrets = append(r.secrets, s, url.QueryEscape(s), url.PathEscape(s))
	if u, err := url.PathUnescape(s); err == nil {
		r.secrets = append(r.secrets, u)
	}
	for _, q := range []string{strconv.Quote(s), strconv.QuoteToASCII(s), `"` + redisRepr(s) + `"`} {
		if q != `"`+s+`"` {
			r.secrets = append(r.secrets, q[1:len(q)-1])
		}
	}
}

// redisRepr is s as Redis quotes a value in its replies (sdscatrepr).
func redisRepr(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c < 0x20 || c > 0x7e {
				fmt.Fprintf(&b, "\\x%02x", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// AddFrom records the secrets an address or a list of addresses holds.
func (r *Redactor) AddFrom(values ...string) {
	for _, v := range values {
		for _, s := range secretsIn(v, true) {
			r.Add(s)
		}
	}
}

// Apply returns msg with every secret hidden: those known by value, wherever they stand,
// then those Redact finds by form.
func (r *Redactor) Apply(msg string) string {
	if r != nil {
		secrets := append([]string(nil), r.secrets...)
		// Longest first: a secret inside another is not half-replaced.
		sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
		for _, s := range secrets {
			if len(s) >= minSecretLen {
				msg = strings.ReplaceAll(msg, s, Redacted)
			}
		}
	}
	return Redact(msg)
}

// Secrets returns a Redactor that knows every secret this invocation may hold: password
// variables, given addresses, the config file's and the resolved server's. cfg and srv may be nil.
func Secrets(getenv func(string) string, cfg *Config, srv *Server, given ...string) *Redactor {
	r := &Redactor{}
	for _, k := range []string{"BUCKETCTL_PASSWORD", "REDISCLI_AUTH", "BUCKETCTL_SENTINEL_PASSWORD"} {
		r.Add(getenv(k))
	}
	for _, k := range []string{"BUCKETCTL_URL", "BUCKETCTL_CLUSTER", "BUCKETCTL_SENTINEL_ADDRS"} {
		r.AddFrom(getenv(k))
	}
	r.AddFrom(given...)
	if srv != nil {
		r.Add(srv.password)
		r.Add(srv.sentinelPassword)
		r.AddFrom(srv.URL)
		r.AddFrom(srv.Cluster...)
		r.AddFrom(srv.SentinelAddrs...)
	}
	if cfg != nil {
		for _, c := range cfg.Contexts {
			r.Add(c.Password)
			for _, env := range []string{c.PasswordEnv, c.SentinelPasswordEnv} {
				if env != "" {
					r.Add(getenv(env))
				}
			}
			r.AddFrom(c.URL)
			r.AddFrom(c.Cluster...)
			r.AddFrom(c.SentinelAddrs...)
		}
	}
	return r
}
