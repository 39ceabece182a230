package cmd

import (
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
)

// redacted stands in for a password wherever one would be shown.
const redacted = "xxxxx"

// urlPassword returns the password a URL-like string holds in its user info
// ("scheme://user:password@host"), whether or not the string parses as a URL.
func urlPassword(s string) (string, bool) {
	_, userinfo, _, ok := splitUserinfo(s)
	if !ok {
		return "", false
	}
	i := strings.IndexByte(userinfo, ':')
	if i < 0 {
		return "", false
	}
	return userinfo[i+1:], true
}

// urlUser returns the user a URL-like string names in its user info ("scheme://user@host",
// "scheme://user:password@host"), unescaped; "" when it names none.
func urlUser(s string) string {
	_, userinfo, _, ok := splitUserinfo(s)
	if !ok {
		return ""
	}
	user, _, _ := strings.Cut(userinfo, ":")
	if u, err := url.PathUnescape(user); err == nil {
		return u
	}
	return user
}

// splitUserinfo cuts s into what comes before its user info, the user info and the rest
// (from the '@'). It does not need s to parse: the user info runs from after "://" to the
// last '@', so a password holding '/', '@' or '%' is still found whole.
func splitUserinfo(s string) (prefix, userinfo, rest string, ok bool) {
	start := strings.Index(s, "://")
	if start < 0 {
		return "", "", "", false
	}
	start += 3
	at := strings.LastIndexByte(s[start:], '@')
	if at < 0 {
		return "", "", "", false
	}
	return s[:start], s[start : start+at], s[start+at:], true
}

// redactURL hides a password in a URL, also in one that does not parse.
func redactURL(s string) string {
	prefix, userinfo, rest, ok := splitUserinfo(s)
	if !ok {
		return s
	}
	i := strings.IndexByte(userinfo, ':')
	if i < 0 {
		return s
	}
	return prefix + userinfo[:i+1] + redacted + rest
}

// normalizeURL accepts a bare host:port (or host) as redis://host:port, like redis-cli's
// -h/-p habit; anything with a scheme is left as it is.
func normalizeURL(s string) string {
	if s == "" || strings.Contains(s, "://") || strings.HasPrefix(s, "/") {
		return s
	}
	return "redis://" + s
}

// minSecretLen is the shortest secret replaced by its value in free text: shorter ones
// would garble messages (a URL's password is hidden by its position whatever its length).
const minSecretLen = 4

// redactor hides every secret it knows in a message.
type redactor struct{ secrets []string }

// add records a secret and its URL-escaped and unescaped forms.
func (r *redactor) add(s string) {
	if len(s) < minSecretLen {
		return
	}
	r.secrets = append(r.secrets, s, url.QueryEscape(s), url.PathEscape(s))
	if u, err := url.PathUnescape(s); err == nil {
		r.secrets = append(r.secrets, u)
	}
}

// userinfoRe finds "scheme://user:password@" in free text, e.g. a URL quoted in an error.
func userinfoRe() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@"']*:)[^\s"']*@`)
}

// apply returns msg with every known secret and every URL password replaced.
func (r *redactor) apply(msg string) string {
	msg = userinfoRe().ReplaceAllString(msg, "${1}"+redacted+"@")
	secrets := append([]string(nil), r.secrets...)
	// Longest first, so that a secret inside another is not half-replaced.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		if len(s) >= minSecretLen {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	return msg
}

// secretEnv are the environment variables that may hold a password.
var secretEnv = []string{"BUCKETCTL_PASSWORD", "REDISCLI_AUTH", "BUCKETCTL_SENTINEL_PASSWORD"}

// redactor collects every secret this invocation may know: the password variables, the
// password of any URL given (flag, environment or context), the config file's passwords
// and the variables its password-env fields name.
func (f *Factory) redactor() *redactor {
	r := &redactor{}
	for _, k := range secretEnv {
		r.add(f.getenv(k))
	}
	for _, u := range []string{f.V.GetString("url"), f.getenv("BUCKETCTL_URL")} {
		if pw, ok := urlPassword(u); ok {
			r.add(pw)
		}
	}
	f.mu.Lock()
	cfg, conn := f.cfg, f.conn
	f.mu.Unlock()
	if conn != nil {
		r.add(conn.password)
		r.add(conn.sentinelPassword)
		if pw, ok := urlPassword(conn.URL); ok {
			r.add(pw)
		}
	}
	if cfg != nil {
		for _, c := range cfg.Contexts {
			r.add(c.Password)
			if c.PasswordEnv != "" {
				r.add(f.getenv(c.PasswordEnv))
			}
			if c.SentinelPasswordEnv != "" {
				r.add(f.getenv(c.SentinelPasswordEnv))
			}
			if pw, ok := urlPassword(c.URL); ok {
				r.add(pw)
			}
		}
	}
	return r
}

// getenv reads the environment through the Factory, so tests can give their own.
func (f *Factory) getenv(k string) string {
	if f.Getenv != nil {
		return f.Getenv(k)
	}
	return os.Getenv(k)
}
