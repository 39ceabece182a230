package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// KeyFunc names the partition a request is charged to ("user:42", "key:1f3a…",
// "ip:203.0.113.7"); ok is false when the request carries no such identity.
type KeyFunc func(r *http.Request) (id string, ok bool)

// UserHeader charges requests to the user named by header name: "user:" + its value. The
// header must be set by an authenticating proxy, never by clients.
func UserHeader(name string) KeyFunc {
	return func(r *http.Request) (string, bool) {
		v := strings.TrimSpace(r.Header.Get(name))
		return "user:" + v, v != ""
	}
}

// UserContext charges requests to the user an earlier middleware stored in the request
// context under key: "user:" + the value formatted with fmt; nil or "" is no identity.
func UserContext(key any) KeyFunc {
	return func(r *http.Request) (string, bool) {
		v := r.Context().Value(key)
		if v == nil {
			return "", false
		}
		s := fmt.Sprint(v)
		return "user:" + s, s != ""
	}
}

// APIKeyHeader charges requests to the API key in header name: "key:" + 32 hex digits of
// its SHA-256, never the key itself. Checking the key is the application's job.
func APIKeyHeader(name string) KeyFunc {
	return func(r *http.Request) (string, bool) {
		v := strings.TrimSpace(r.Header.Get(name))
		if v == "" {
			return "", false
		}
		return "key:" + digest(v), true
	}
}

// ClientIP charges requests to the client's IP address ("ip:" + it, IPv6 by /64): the TCP
// peer, or behind trusted proxies the first untrusted X-Forwarded-For hop from the right.
func ClientIP(trusted ...netip.Prefix) KeyFunc {
	isTrusted := func(a netip.Addr) bool {
		return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(a) })
	}
	return func(r *http.Request) (string, bool) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		addr, err := netip.ParseAddr(host)
		if err != nil {
			return "", false
		}
		if addr = addr.Unmap(); isTrusted(addr) {
			addr = forwardedClient(r.Header.Values("X-Forwarded-For"), addr, isTrusted)
		}
		if addr.Is4() {
			return "ip:" + addr.String(), true
		}
		p, _ := addr.WithZone("").Prefix(64)
		return "ip:" + p.String(), true
	}
}

// forwardedClient walks X-Forwarded-For from the right while the hops are trusted; an entry
// that does not parse stops at the last address known good.
func forwardedClient(headers []string, peer netip.Addr, trusted func(netip.Addr) bool) netip.Addr {
	hops := strings.Split(strings.Join(headers, ","), ",")
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !trusted(client) {
			break
		}
	}
	return client
}

// FirstOf uses the first identity fns find: the user, say, else the API key, else the IP.
func FirstOf(fns ...KeyFunc) KeyFunc {
	return func(r *http.Request) (string, bool) {
		for _, f := range fns {
			if id, ok := f(r); ok {
				return id, true
			}
		}
		return "", false
	}
}

// partitionID digests an id with braces or over 64 bytes: clients cannot make keys of any size.
func partitionID(id string) string {
	if len(id) > 64 || strings.ContainsAny(id, "{}") {
		return "h:" + digest(id)
	}
	return id
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
