package connect

import (
	"net/url"
	"regexp"
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
	// `invalid argument "VALUE" for "--cluster"`, `--url "VALUE": ...`: a flag parser's
	// error quoting a connection flag's value (Go-quoted).
	flagArgRe = lazyRegexp(`((?:--(?:url|cluster|sentinel-addrs)[ =]|invalid argument )\s*)("(?:[^"\\]|\\.)*")`)
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
	// A flag parser's error quotes the value of a connection flag whole: read as a value.
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

// RedactValue hides the secrets of one value: a URL, an address or a list of addresses, as
// a flag, a variable or a config file's field gives it. Its secrets are found where the
// parsers find them (valueSecrets), whatever they hold (a space, a comma, a quote), then
// any other in the forms Redact finds.
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

// redactForms hides the secrets s holds in the forms of the regular expressions above.
func redactForms(s string) string {
	if !strings.ContainsAny(s, "@=") {
		return s // each form holds an '@' or an '='
	}
	s = urlPasswordRe().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = urlLoneInfoRe().ReplaceAllString(s, "${1}"+Redacted+"@")
	s = redactAddrPasswords(s)
	return querySecretRe().ReplaceAllString(s, "${1}"+Redacted)
}

// redactAddrPasswords hides the password of each "user:password@host:port" in s whose
// host:port is one (seedAddr): a key such as Traefik's "rate:router@file:10.5.0.3" or
// "rl:bob@docker:2001:db8::1" names no server, and a key is never a secret.
func redactAddrPasswords(s string) string {
	ms := addrPasswordRe().FindAllStringSubmatchIndex(s, -1)
	for k := len(ms) - 1; k >= 0; k-- {
		m := ms[k]
		switch {
		case !seedAddr(s[m[8]:m[9]], s[m[1]:]):
		case m[6] < 0: // no password before the '@': the form says one is there
			s = s[:m[5]] + Redacted + s[m[5]:]
		default:
			s = s[:m[6]] + Redacted + s[m[7]:]
		}
	}
	return s
}

// seedAddr says whether hostPort, followed by rest, is a seed's host:port: a host with no
// colon (or a bracketed IPv6 address) and a port of digits that ends there (not the first
// part of an IP address, a time or a longer name).
func seedAddr(hostPort, rest string) bool {
	c := strings.LastIndexByte(hostPort, ':')
	if host := hostPort[:c]; strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
		return false
	}
	return rest == "" || !strings.ContainsRune("0123456789.:@_-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", rune(rest[0]))
}

// span is a secret's place in a value, v[i:j]; user says it is user info with no colon (a
// user to go-redis, a password to redis-cli).
type span struct {
	i, j int
	user bool
}

// valueSecrets finds the secrets of one value: a URL, an address or a list of them, as a
// flag, a variable or a config file's field gives it. A value the parsers read as a list
// of whole addresses has each address's own secret (itemSecret); from the first item that
// is no address on, the value is read conservatively (restSecret): more may be hidden than
// the secret, never less (a password holding a comma, an '@', a "//" or a space).
func valueSecrets(s string) []span {
	if !strings.Contains(s, "@") {
		return nil // each form of user info holds an '@' (a query's secret is querySecretValueRe's)
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

// itemSecret reads one address of a list: a URL of a known scheme that net/url parses
// whole, or a seed, [user[:password]@]host:port (an empty host is the parser's too). ok
// when it is one, with its secret's place (none when it names none).
func itemSecret(item string) (span, bool) {
	at := strings.LastIndexByte(item, '@')
	if at < 0 {
		return span{}, false
	}
	if t := strings.TrimLeft(item, " \t"); urlForm(t) {
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

// unixPath says whether a URL's user info is in fact a socket path holding an '@'
// (unix:///run/a@b.sock): a unix URL whose authority is empty.
func unixPath(item string) bool {
	t := strings.TrimLeft(item, " \t")
	return strings.HasPrefix(t, "unix:///")
}

// restSecret hides, conservatively, the user info that s holds from off on: from "//" (a
// URL) or its first colon (a seed) to the last '@'. More may be hidden than the secret
// (a seed with no port, a host that holds an '@'), never less.
func restSecret(s string, off int) []span {
	rest := s[off:]
	at := strings.LastIndexByte(s, '@')
	// (A scheme no server URL has is part of a seed's user info, as the seed parser reads
	// it: u://pw@host:port has the password "//pw".)
	if t := strings.TrimLeft(rest, " \t"); urlForm(t) && serverScheme(t) {
		if unixPath(t) && !strings.Contains(t[len("unix:///"):], ":") {
			return nil // a socket path holding an '@', and no password
		}
		start := off + strings.Index(rest, "//") + 2
		if at < start {
			return nil
		}
		userinfo := s[start:at]
		if c := strings.IndexByte(userinfo, ':'); c >= 0 {
			return []span{{start + c + 1, at, false}}
		}
		// A server URL's colon-less user info is a user (go-redis), or a password
		// (redis-cli).
		return []span{{start, at, true}}
	}
	start := off
	if c := strings.IndexByte(rest, ':'); c >= 0 {
		start = off + c + 1
	}
	if at < start || start == off {
		return nil // no colon before an '@': a user at most
	}
	return []span{{start, at, false}}
}

// serverScheme says whether s starts with a server URL's scheme, in any case as url.Parse
// reads it (or "//", which the parsers read as redis://).
func serverScheme(s string) bool {
	for _, p := range []string{"redis://", "rediss://", "unix://", "//"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

// urlForm says whether s starts as a URL does: "scheme://" or "//".
func urlForm(s string) bool {
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && strings.IndexByte("0123456789+.-", s[i]) >= 0) {
		i++
	}
	if i > 0 && strings.HasPrefix(s[i:], "://") {
		return true
	}
	return strings.HasPrefix(s, "//")
}

// redactList hides the secrets of a list given item by item (a config file's cluster or
// sentinel-addrs), read as the parser reads it, joined: a password holding a comma may
// stand in two items.
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
	for _, f := range []struct {
		re    *regexp.Regexp
		group int // the secret's group
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
