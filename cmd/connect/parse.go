package connect

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

const urlHelp = "use host:port, redis://host:port/db, rediss://host:port or unix:///path/to/socket"

// NormalizeURL reads a bare host:port (or host) as redis://host:port.
func NormalizeURL(s string) string {
	if s == "" || strings.Contains(s, "://") || strings.HasPrefix(s, "/") {
		return s
	}
	return "redis://" + s
}

// serverURL is go-redis's options of a URL (nil when it does not parse) and its user info.
type serverURL struct {
	opt *redis.Options
	userInfo
}

// userInfo is the user (unescaped) and password of "user[:password]".
type userInfo struct {
	user, password string
	hasPassword    bool
}

func parseUserInfo(s string) userInfo {
	user, pw, found := strings.Cut(s, ":")
	if un, err := url.PathUnescape(user); err == nil {
		user = un
	}
	return userInfo{user, pw, found}
}

// parseURL is the one parse of a Redis URL; its error quotes neither URL nor password.
func parseURL(raw string) (serverURL, error) {
	raw = NormalizeURL(raw)
	var u serverURL
	_, userinfo, _, hasInfo := splitUserinfo(raw)
	hasInfo = hasInfo && !unixPath(raw)
	if hasInfo {
		u.userInfo = parseUserInfo(userinfo)
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		msg := urlErrText(err)
		if hasInfo && quotesPiece(msg, userinfo) {
			// The parser quoted a piece of the user info ('/', '?' or '#' cut it).
			msg = "not a valid URL (a password holding '/', '?', '#' or '%' must be URL-escaped, or go in REDISCLI_AUTH)"
		}
		r := &Redactor{}
		r.Add(u.password)
		return u, errors.New(r.Apply(msg))
	}
	if opt.Network == "tcp" {
		// The address as written: go-redis would accept "host:" or "a:b:c".
		host := hostPart(raw)
		var ae *net.AddrError
		if _, _, err := net.SplitHostPort(host); errors.As(err, &ae) && ae.Err == "missing port in address" {
			host = net.JoinHostPort(strings.Trim(host, "[]"), "6379")
		}
		if err := checkHostPort(host); err != nil {
			return u, err
		}
		if h, _, _ := net.SplitHostPort(host); h == "" {
			return u, errors.New("the host is empty (an unset variable?): name the server, e.g. redis://localhost:6379")
		}
	}
	if err := checkDB(raw, opt.Network == "tcp"); err != nil {
		return u, err
	}
	u.opt = opt
	return u, nil
}

// checkDB refuses a database go-redis would read as another (a sign, /1?db=0).
func checkDB(raw string, tcp bool) error {
	pu, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var dbs []string
	if p := strings.TrimPrefix(pu.Path, "/"); tcp && p != "" {
		dbs = append(dbs, "path /"+p)
	}
	q, _ := url.ParseQuery(pu.RawQuery)
	for _, v := range q["db"] {
		dbs = append(dbs, "db="+v)
	}
	if len(dbs) > 1 {
		return fmt.Errorf("the database is named %d times (%s): name it once, e.g. redis://host:port/1", len(dbs), strings.Join(dbs, ", "))
	}
	for _, d := range dbs {
		n := d[strings.IndexAny(d, "/=")+1:]
		if !isDecimal(n) {
			return fmt.Errorf("the database %q is not a number from 0 up, written in plain digits: e.g. redis://host:port/1", n)
		}
	}
	return nil
}

// isDecimal says s is plain decimal digits (no sign, no leading zero) that fit an int.
func isDecimal(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && strconv.Itoa(n) == s
}

// hostPart is the host[:port] of a URL as written.
func hostPart(raw string) string {
	s := raw[strings.Index(raw, "://")+3:]
	if _, _, rest, ok := splitUserinfo(raw); ok {
		s = rest[1:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

// quotesPiece says whether msg holds any three characters of secret in a row.
func quotesPiece(msg, secret string) bool {
	for i := 0; i+3 <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+3]) {
			return true
		}
	}
	return len(secret) > 0 && len(secret) < 3 && strings.Contains(msg, secret)
}

// urlErrText is a URL parse error without the URL it quotes.
func urlErrText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// addrList is a list of addresses (seeds, sentinels) and their user info's credentials.
type addrList struct {
	addrs []string
	userInfo
}

// parseAddrs parses comma-separated host:port, each with the same user info or none.
func parseAddrs(values []string) (addrList, error) {
	var l addrList
	seenInfo := false
	// An error quotes the list whole, redacted: an item may be a piece of a password.
	joined := strings.Join(values, ",")
	secrets := valueSecrets(joined)
	off := 0
	for _, raw := range strings.Split(joined, ",") {
		start, end := off, off+len(raw)
		off = end + 1
		a := strings.TrimSpace(raw)
		if a == "" {
			continue
		}
		for _, scheme := range []string{"redis://", "rediss://"} {
			a = strings.TrimPrefix(a, scheme)
		}
		addr := a
		if i := strings.LastIndexByte(a, '@'); i >= 0 {
			addr = a[i+1:]
			info := parseUserInfo(a[:i])
			if seenInfo && (info.user != l.user || info.password != l.password) {
				return l, fmt.Errorf("%s: the addresses name different users or passwords (give the credentials once: --user, REDISCLI_AUTH)", RedactValue(joined))
			}
			seenInfo, l.userInfo = true, info
		}
		addr = strings.TrimSuffix(addr, "/")
		if err := checkHostPort(addr); err != nil {
			if cutsSecret(secrets, start, end) {
				err = errors.New("an address is not host:port, and commas separate addresses: a password holding a comma goes in password-env or REDISCLI_AUTH")
			}
			return l, fmt.Errorf("%s: %s (use host:port,host:port)", RedactValue(joined), err)
		}
		l.addrs = append(l.addrs, addr)
	}
	return l, nil
}

// cutsSecret says a secret runs across an end of the item s[start:end].
func cutsSecret(secrets []span, start, end int) bool {
	for _, sp := range secrets {
		if sp.i < end && sp.j > start && (sp.i < start || sp.j > end) {
			return true
		}
	}
	return false
}

// SplitList splits comma-separated values and drops empty ones.
func SplitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
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
	if n, err := strconv.Atoi(port); err != nil || !isDecimal(port) || n < 1 || n > 65535 {
		return errors.New("the port " + strconv.Quote(port) + " is not a number from 1 to 65535")
	}
	return nil
}

// TypedPassword is the usage error of a flag value holding a password, or nil; fix says
// where the password goes.
func TypedPassword(flag, value, fix string) error {
	if len(secretsIn(value, false)) == 0 {
		return nil
	}
	return Usagef("--%s %s holds a password, which the command line would show to every user of this machine (ps, shell history): %s",
		flag, RedactValue(value), fix)
}

// TypedListPassword is TypedPassword for a list flag's values, read joined.
func TypedListPassword(flag string, values []string, fix string) error {
	return TypedPassword(flag, strings.Join(values, ","), fix)
}

// PasswordHome says where a password goes instead of the command line.
const PasswordHome = "put it in REDISCLI_AUTH or BUCKETCTL_PASSWORD, or in the config file's context (password-env)"
