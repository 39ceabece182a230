package connect

import (
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Redacted stands in for a secret wherever one would be shown.
const Redacted = "xxxxx"

// The forms a secret takes inside an address, found wherever they appear in a text (a
// flag's value, a config file's field, an error that quotes a URL). Each is compiled on
// first use, not at start-up: most runs redact nothing.
var (
	// "scheme://user:password@" (or "//user:password@", with no scheme or a broken one): a
	// URL's user info. The password runs to the last '@' before a space, a quote or a
	// comma, so one holding '/', '@' or '%' is found whole.
	urlPasswordRe = lazyRegexp(`((?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^\s:/@"',]*:)([^\s"',]*)@`)
	// "//secret@": user info with no colon, which redis-cli reads as a password
	// (redis://PASSWORD@host), so it is hidden whole.
	urlLoneInfoRe = lazyRegexp(`((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)([^\s:/@"',]+)@`)
	// "user:password@host:port" without a scheme: a Cluster seed or a Sentinel address
	// (a password that starts with '/' would be a URL's "://").
	addrPasswordRe = lazyRegexp(`(^|[\s,;=(\["'<])([^\s:/@"',;=(\[<]*:)([^\s"',/][^\s"',]*)?@([^\s"',@/]+:[0-9]+)`)
	// "?password=...", "&auth_token=...": a query parameter whose name says it holds a
	// secret (pass, pwd, auth, secret, token, key, cred, sig in any case).
	querySecretRe = lazyRegexp(`([?&;][^\s=&;?#"']*(?i:pass|pwd|auth|secret|token|key|cred|sig)[^\s=&;?#"']*=)([^\s&;#"',]*)`)
	// The same parameter in a value (a URL as given): its value runs to the next parameter,
	// as url.ParseQuery reads it, a space or a comma included.
	querySecretValueRe = lazyRegexp(`([?&;][^\s=&;?#"']*(?i:pass|pwd|auth|secret|token|key|cred|sig)[^\s=&;?#"']*=)([^&;#]*)`)
)

// Redact hides every secret a text holds in one of the forms above: a URL's password (also
// in a URL that does not parse), a seed's or sentinel's user:password@, a secret query
// parameter. A text is read word by word; a value (a flag's, a field's) is RedactValue's,
// which reads it as the parsers do. Redactor.Apply adds the secrets known by value.
func Redact(s string) string {
	if !strings.ContainsAny(s, " \t\n") {
		return RedactValue(s) // one word: read as a value
	}
	return redactForms(s)
}

// RedactValue hides the secrets of one value: a URL, an address or a list of addresses, as
// a flag, a variable or a config file's field gives it. Its secrets are found where the
// parsers find them (valueSecrets), whatever they hold (a space, a comma, a quote), then
// any other in the forms Redact finds.
func RedactValue(v string) string {
	spans := valueSecrets(v)
	for k := len(spans) - 1; k >= 0; k-- {
		v = v[:spans[k].i] + Redacted + v[spans[k].j:]
	}
	if strings.Contains(v, "=") {
		v = querySecretValueRe().ReplaceAllString(v, "${1}"+Redacted)
	}
	return redactForms(v)
}

// redactForms hides the secrets s holds in the forms of the regular expressions above.
func redactForms(s string) string {
	if !strings.ContainsAny(s, "@=") {
		return s // each form holds an '@' or an '='
	}
	s = urlPasswordRe().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = urlLoneInfoRe().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = addrPasswordRe().ReplaceAllString(s, "${1}${2}"+Redacted+"@${4}")
	return querySecretRe().ReplaceAllString(s, "${1}"+Redacted)
}

// span is a secret's place in a value, v[i:j]; user says it is user info with no colon (a
// user to go-redis, a password to redis-cli).
type span struct {
	i, j int
	user bool
}

// valueSecrets finds the secrets of one value where the parsers find them, whatever they
// hold (a space, a comma, a quote, an '@'). A value may be a list (commas): of URLs, split
// where the next URL starts; of seeds, read seed by seed (seedSecrets).
//
// A URL's user info runs from "//" to its last '@' (a password holding a comma or an '@'
// is found whole); its password is what follows its first colon, and without a colon the
// user info is the secret whole (user: go-redis reads it as a user, redis-cli as a
// password).
func valueSecrets(s string) []span {
	var out []span
	off := 0
	for _, part := range splitURLs(s) {
		if prefix, userinfo, _, found := splitUserinfo(part); found {
			i, j := off+len(prefix), off+len(prefix)+len(userinfo)
			if c := strings.IndexByte(userinfo, ':'); c >= 0 {
				out = append(out, span{i + c + 1, j, false})
			} else if loneInfo(userinfo) {
				out = append(out, span{i, j, true})
			}
		} else if !strings.Contains(part, "//") {
			for _, sp := range seedSecrets(part) {
				out = append(out, span{off + sp.i, off + sp.j, false})
			}
		}
		off += len(part) + 1
	}
	return out
}

// splitURLs cuts a list at each comma that a URL follows ("redis://", "//"): a comma inside
// a URL's password does not start a URL.
func splitURLs(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && urlStart(strings.TrimLeft(s[i+1:], " \t")) {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// urlStart says whether s starts with a URL's scheme and "//", or "//".
func urlStart(s string) bool {
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && strings.IndexByte("0123456789+.-", s[i]) >= 0) {
		i++
	}
	if i > 0 && i < len(s) && s[i] == ':' {
		i++
	}
	return strings.HasPrefix(s[i:], "//")
}

// seedSecrets finds the passwords of a list of seeds, [user[:password]@]host:port,... An
// item that is no address alone is the start of a seed whose password holds a comma: its
// password runs from its first colon to the first '@' that a host:port follows, whatever
// lies between (u:pa,ss@h:1,h2:2 hides "pa,ss").
func seedSecrets(s string) []span {
	if !strings.Contains(s, "@") {
		return nil
	}
	var out []span
	for off := 0; off <= len(s); {
		end := off + strings.IndexByte(s[off:]+",", ',')
		item := s[off:end]
		if t := strings.TrimSpace(item); t == "" || isHostPort(t) {
			off = end + 1
			continue
		}
		if sp, ok := seedSecret(item); ok {
			if sp.j > sp.i {
				out = append(out, span{off + sp.i, off + sp.j, false})
			}
			off = end + 1
			continue
		}
		c := strings.IndexByte(item, ':')
		at := -1
		for k := off + c + 1; c >= 0 && k < len(s); k++ {
			if s[k] != '@' {
				continue
			}
			e := k + 1 + strings.IndexByte(s[k+1:]+",", ',')
			if isHostPort(strings.TrimSpace(s[k+1 : e])) {
				at = k
				break
			}
		}
		if at < 0 { // no seed ends here: a malformed address, holding no password
			off = end + 1
			continue
		}
		out = append(out, span{off + c + 1, at, false})
		off = at + 1 + strings.IndexByte(s[at+1:]+",", ',') + 1
	}
	return out
}

// seedSecret reads s as one seed, [user[:password]@]host:port: ok when it is one, with the
// password's place (empty when it names none).
func seedSecret(s string) (span, bool) {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || !isHostPort(strings.TrimSpace(s[at+1:])) {
		return span{}, false
	}
	c := strings.IndexByte(s[:at], ':')
	if c < 0 {
		return span{}, true
	}
	return span{c + 1, at, false}, true
}

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// secretsIn returns the secrets the value s holds, where the parsers find them and in the
// forms Redact hides, so that a text that quotes one alone (an error echoing a password)
// is redacted too; with users, a URL's user info with no colon counts (a user to go-redis,
// perhaps a password to redis-cli).
func secretsIn(s string, users bool) []string {
	var out []string
	for _, sp := range valueSecrets(s) {
		if users || !sp.user {
			out = append(out, s[sp.i:sp.j])
		}
	}
	if !strings.ContainsAny(s, "@=") {
		return out
	}
	for i, re := range []*regexp.Regexp{urlPasswordRe(), urlLoneInfoRe(), addrPasswordRe(), querySecretValueRe()} {
		if i == 1 && !users {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			out = append(out, m[len(m)-1])
			if i == 2 { // addrPasswordRe: the password is its third group
				out[len(out)-1] = m[3]
			}
		}
	}
	return out
}

// isHostPort says whether s is host:port with a numeric port (the end of a seed's address).
func isHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || port == "" {
		return false
	}
	_, err = strconv.Atoi(port)
	return err == nil
}

// loneInfo says whether user info with no colon is one: a socket path holding an '@'
// (unix:///run/a@b.sock) has a '/' there instead.
func loneInfo(userinfo string) bool { return userinfo != "" && !strings.Contains(userinfo, "/") }

// splitUserinfo cuts s into what comes before its user info, the user info and the rest
// (from the '@'). It does not need s to parse: the user info runs from after "//" (with a
// scheme, a broken one or none) to the last '@', so a password holding '/', '@' or '%' is
// still found whole.
func splitUserinfo(s string) (prefix, userinfo, rest string, ok bool) {
	start := strings.Index(s, "//")
	if start < 0 {
		return "", "", "", false
	}
	start += 2
	at := strings.LastIndexByte(s[start:], '@')
	if at < 0 {
		return "", "", "", false
	}
	return s[:start], s[start : start+at], s[start+at:], true
}

// minSecretLen is the shortest secret replaced by its value in free text: shorter ones
// would garble messages (a secret in an address is hidden by its position whatever its
// length).
const minSecretLen = 4

// Redactor hides, in a message, every secret it knows by value and every secret Redact
// finds by its form.
type Redactor struct{ secrets []string }

// Add records a secret and the forms a message may quote it in (URL-escaped, unescaped,
// Go-quoted).
func (r *Redactor) Add(s string) {
	if len(s) < minSecretLen {
		return
	}
	r.secrets = append(r.secrets, s, url.QueryEscape(s), url.PathEscape(s))
	if u, err := url.PathUnescape(s); err == nil {
		r.secrets = append(r.secrets, u)
	}
	if q := strconv.Quote(s); q != `"`+s+`"` {
		r.secrets = append(r.secrets, q[1:len(q)-1])
	}
}

// AddFrom records the secrets an address or a list of addresses holds.
func (r *Redactor) AddFrom(values ...string) {
	for _, v := range values {
		for _, s := range secretsIn(v, true) {
			r.Add(s)
		}
	}
}

// Apply returns msg with every secret hidden: each one it knows by value wherever it stands
// (inside a word too: a server may quote one next to anything), then those Redact finds by
// their form.
func (r *Redactor) Apply(msg string) string {
	if r != nil {
		secrets := append([]string(nil), r.secrets...)
		// Longest first, so that a secret inside another is not half-replaced.
		sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
		for _, s := range secrets {
			if len(s) >= minSecretLen {
				msg = strings.ReplaceAll(msg, s, Redacted)
			}
		}
	}
	return Redact(msg)
}

// secretEnv are the environment variables that may hold a password.
var secretEnv = []string{"BUCKETCTL_PASSWORD", "REDISCLI_AUTH", "BUCKETCTL_SENTINEL_PASSWORD"}

// serverEnv are the variables that may name a server, and so hold a password in it.
var serverEnv = []string{"BUCKETCTL_URL", "BUCKETCTL_CLUSTER", "BUCKETCTL_SENTINEL_ADDRS"}

// Secrets returns a Redactor that knows every secret this invocation may hold: the
// password variables, the addresses given (flags, variables), the config file's
// passwords, addresses and the variables its password-env fields name, and the resolved
// server's credentials. cfg and srv may be nil.
func Secrets(getenv func(string) string, cfg *Config, srv *Server, given ...string) *Redactor {
	r := &Redactor{}
	for _, k := range secretEnv {
		r.Add(getenv(k))
	}
	for _, k := range serverEnv {
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
