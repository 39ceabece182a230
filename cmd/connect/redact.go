package connect

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// Redacted stands in for a secret wherever one would be shown.
const Redacted = "xxxxx"

var lazyRegexp = rediserr.LazyRegexp

// The forms a secret takes in a text.
var (
	// "scheme://user:password@" or "//user:password@": the password runs to the last '@'.
	urlPasswordRe = lazyRegexp(`((?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^\s:/@"',]*:)([^\s"',]*)@`)
	// "//secret@": colon-less user info, a password to redis-cli.
	urlLoneInfoRe = lazyRegexp(`((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)([^\s:/@"',]+)@`)
	// "user:password@host:port": a Cluster seed or a Sentinel address.
	addrPasswordRe = lazyRegexp(`(^|[\s,;=(\["'<])([^\s:/@"',;=(\[<]*:)([^\s"',/][^\s"',]*)?@([^\s"',@/]+:[0-9]+)`)
	// A flag parser's error quoting a connection flag's value (Go-quoted).
	flagArgRe = lazyRegexp(`((?:--(?:url|cluster|sentinel-addrs)[ =]|invalid argument )\s*)("(?:[^"\\]|\\.)*")`)
	// "?password=...", "&auth_token=...": a query parameter named as a secret.
	querySecretRe = lazyRegexp(`([?&;][^\s=&;?#"']*(?i:pass|pwd|auth|secret|token|key|cred|sig)[^\s=&;?#"']*=)([^\s&;#"',]*)`)
	// The same in a value: it runs to the next parameter, as url.ParseQuery reads it.
	querySecretValueRe = lazyRegexp(`([?&;][^\s=&;?#"']*(?i:pass|pwd|auth|secret|token|key|cred|sig)[^\s=&;?#"']*=)([^&;#]*)`)
)

// Redact hides every secret a text holds in the forms above; a one-word text is read as
// a value (RedactValue). Redactor.Apply adds the secrets known by value.
func Redact(s string) string {
	if !strings.ContainsAny(s, " \t\n") {
		return RedactValue(s)
	}
	s = flagArgRe().ReplaceAllStringFunc(s, func(m string) string {
		sub := flagArgRe().FindStringSubmatch(m)
		v, err := strconv.Unquote(sub[2])
		if err != nil {
			return sub[1] + `"` + Redacted + `"`
		}
		return sub[1] + strconv.Quote(RedactValue(v))
	})
	return redactForms(s)
}

// RedactValue hides the secrets of a URL or address list, where the parsers find them.
func RedactValue(v string) string {
	spans := valueSecrets(v)
	for k := len(spans) - 1; k >= 0; k-- {
		v = v[:spans[k].i] + Redacted + v[spans[k].j:]
	}
	return redactForms(queryValues(v))
}

// queryValues hides a value's secret query parameters, each to the next parameter.
func queryValues(v string) string {
	if strings.Contains(v, "=") {
		v = querySecretValueRe().ReplaceAllString(v, "${1}"+Redacted)
	}
	return v
}

func redactForms(s string) string {
	if !strings.ContainsAny(s, "@=") {
		return s
	}
	s = urlPasswordRe().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = urlLoneInfoRe().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = redactAddrPasswords(s)
	return querySecretRe().ReplaceAllString(s, "${1}"+Redacted)
}

// redactAddrPasswords hides the password of each "user:password@host:port" that is a seed
// (seedAddr): a key such as "rate:router@file:10.5.0.3" is never a secret.
func redactAddrPasswords(s string) string {
	ms := addrPasswordRe().FindAllStringSubmatchIndex(s, -1)
	for k := len(ms) - 1; k >= 0; k-- {
		m := ms[k]
		switch {
		case !seedAddr(s[m[8]:m[9]], s[m[1]:]):
		case m[6] < 0:
			s = s[:m[5]] + Redacted + s[m[5]:]
		default:
			s = s[:m[6]] + Redacted + s[m[7]:]
		}
	}
	return s
}

// seedAddr says hostPort, followed by rest, is a seed's: a plain or bracketed host, a port.
func seedAddr(hostPort, rest string) bool {
	c := strings.LastIndexByte(hostPort, ':')
	if host := hostPort[:c]; strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
		return false
	}
	return rest == "" || !strings.ContainsRune("0123456789.:@_-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(rest[0]))
}

// span is a secret's place in a value, v[i:j]; user: colon-less user info.
type span struct {
	i, j int
	user bool
}

// valueSecrets finds the secrets of each address of a list, then of the rest from the
// first item that is no address (restSecret).
func valueSecrets(s string) []span {
	if !strings.Contains(s, "@") {
		return nil
	}
	var out []span
	for off := 0; off <= len(s); {
		end := off + strings.IndexByte(s[off:]+",", ',')
		item := s[off:end]
		if t := strings.TrimSpace(item); t != "" && checkHostPort(t) != nil {
			sp, ok := itemSecret(item)
			if !ok {
				return append(out, restSecret(s, off)...)
			}
			if sp.j > sp.i {
				out = append(out, span{off + sp.i, off + sp.j, sp.user})
			}
		}
		off = end + 1
	}
	return out
}

// itemSecret is the secret's place in a URL or [user[:password]@]host:port; ok when it is one.
func itemSecret(item string) (span, bool) {
	at := strings.LastIndexByte(item, '@')
	if at < 0 {
		return span{}, false
	}
	if t := strings.TrimLeft(item, " \t"); urlForm().MatchString(t) {
		u, err := url.Parse(t)
		if err != nil || !serverScheme(t) || u.Port() != "" && checkHostPort(u.Host) != nil {
			return span{}, false
		}
		if unixPath(item) {
			return span{}, true
		}
		prefix, userinfo, _, _ := splitUserinfo(item)
		i := len(prefix)
		if c := strings.IndexByte(userinfo, ':'); c >= 0 {
			return span{i + c + 1, i + len(userinfo), false}, true
		}
		if userinfo != "" {
			return span{i, i + len(userinfo), true}, true
		}
		return span{}, true
	}
	if checkHostPort(strings.TrimSpace(item[at+1:])) != nil {
		return span{}, false
	}
	if c := strings.IndexByte(item[:at], ':'); c >= 0 {
		return span{c + 1, at, false}, true
	}
	return span{}, true
}

// unixPath says a URL is a socket path, whose '@' is no user info (unix:///run/a@b.sock).
func unixPath(item string) bool { return strings.HasPrefix(strings.TrimLeft(item, " \t"), "unix:///") }

// restSecret is the user info s holds from off on: more than the secret, never less.
func restSecret(s string, off int) []span {
	rest := s[off:]
	at := strings.LastIndexByte(s, '@')
	if t := strings.TrimLeft(rest, " \t"); urlForm().MatchString(t) && serverScheme(t) {
		if unixPath(t) && !strings.Contains(t[len("unix:///"):], ":") {
			return nil
		}
		start := off + strings.Index(rest, "//") + 2
		if at < start {
			return nil
		}
		userinfo := s[start:at]
		if c := strings.IndexByte(userinfo, ':'); c >= 0 {
			return []span{{start + c + 1, at, false}}
		}
		return []span{{start, at, true}}
	}
	start := off
	if c := strings.IndexByte(rest, ':'); c >= 0 {
		start = off + c + 1
	}
	if at < start || start == off {
		return nil
	}
	return []span{{start, at, false}}
}

func serverScheme(s string) bool {
	for _, p := range []string{"redis://", "rediss://", "unix://", "//"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

var urlForm = lazyRegexp(`^(?:[A-Za-z][A-Za-z0-9+.-]*:)?//`)

// redactList hides the secrets of a list read joined, as the parser reads it.
func redactList(items []string) []string {
	if items == nil {
		return nil
	}
	joined := strings.Join(items, ",")
	spans := valueSecrets(joined)
	out := make([]string, len(items))
	off := 0
	for n, item := range items {
		var b strings.Builder
		pos := 0
		for _, sp := range spans {
			i, j := max(sp.i-off, 0), min(sp.j-off, len(item))
			if i >= j || i < pos {
				continue
			}
			b.WriteString(item[pos:i])
			b.WriteString(Redacted)
			pos = j
		}
		b.WriteString(item[pos:])
		out[n] = redactForms(queryValues(b.String()))
		off += len(item) + 1
	}
	return out
}

// secretsIn returns the secrets the value s holds; with users, colon-less user info counts.
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
	for _, f := range []struct {
		re    *regexp.Regexp
		group int
		user  bool
	}{{urlPasswordRe(), 2, false}, {urlLoneInfoRe(), 2, true}, {addrPasswordRe(), 3, false}, {querySecretValueRe(), 2, false}} {
		if f.user && !users {
			continue
		}
		for _, m := range f.re.FindAllStringSubmatch(s, -1) {
			out = append(out, m[f.group])
		}
	}
	return out
}

// splitUserinfo cuts s into prefix, user info ("//" to the last '@') and the rest from '@'.
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

// minSecretLen is the shortest secret replaced by value in free text (shorter ones garble).
const minSecretLen = 4

// Redactor hides the secrets it knows by value and those Redact finds by form.
type Redactor struct{ secrets []string }

// Add records secrets and the forms a message may quote them in.
func (r *Redactor) Add(secrets ...string) {
	for _, s := range secrets {
		if len(s) < minSecretLen {
			continue
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
}

var reprEscapes = map[byte]string{'\\': `\\`, '"': `\"`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\a': `\a`, '\b': `\b`}

// redisRepr is s as Redis quotes a value in its replies (sdscatrepr).
func redisRepr(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if e, ok := reprEscapes[c]; ok {
			b.WriteString(e)
		} else if c < 0x20 || c > 0x7e {
			fmt.Fprintf(&b, "\\x%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// AddFrom records the secrets of addresses.
func (r *Redactor) AddFrom(values ...string) {
	for _, v := range values {
		for _, s := range secretsIn(v, true) {
			r.Add(s)
		}
	}
}

// Apply hides in msg the secrets known by value, wherever they stand, then Redact's.
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

// Secrets returns a Redactor that knows every secret this invocation may hold: the
// environment's, the given addresses', cfg's and srv's (both may be nil).
func Secrets(getenv func(string) string, cfg *Config, srv *Server, given ...string) *Redactor {
	r := &Redactor{}
	r.Add(getenv("BUCKETCTL_PASSWORD"), getenv("REDISCLI_AUTH"), getenv("BUCKETCTL_SENTINEL_PASSWORD"))
	r.AddFrom(getenv("BUCKETCTL_URL"), getenv("BUCKETCTL_CLUSTER"), getenv("BUCKETCTL_SENTINEL_ADDRS"))
	r.AddFrom(given...)
	if srv != nil {
		r.Add(srv.password, srv.sentinelPassword)
		r.AddFrom(slices.Concat([]string{srv.URL}, srv.Cluster, srv.SentinelAddrs)...)
	}
	if cfg != nil {
		for _, c := range cfg.Contexts {
			if c.PasswordEnv != "" {
				r.Add(getenv(c.PasswordEnv))
			}
			if c.SentinelPasswordEnv != "" {
				r.Add(getenv(c.SentinelPasswordEnv))
			}
			r.Add(c.Password)
			r.AddFrom(slices.Concat([]string{c.URL}, c.Cluster, c.SentinelAddrs)...)
		}
	}
	return r
}
