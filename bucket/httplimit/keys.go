package httplimit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// KeyFunc names the partition a request is charged to: "user:42", "key:1f3a…",
// "ip:203.0.113.7". ok is false when the request carries no such identity. The id becomes
// the hash tag of every bucket key of the request, so all its tiers share a Cluster slot.
type KeyFunc func(r *http.Request) (id string, ok bool)

// UserHeader charges requests to the user named by header name (as set by an
// authenticating proxy in front of the application: the header must not be settable by
// clients). The id is "user:" + the header value.
func UserHeader(name string) KeyFunc {
	return func(r *http.Request) (string, bool) {
		v := strings.TrimSpace(r.Header.Get(name))
		return "user:" + v, v != ""
	}
}

// UserContext charges requests to the user stored in the request context under key (as an
// authentication middleware earlier in the chain puts it there). The value is formatted with
// fmt (a string, a number or a fmt.Stringer); nil or "" is no identity. The id is "user:" +
// the value.
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

// APIKeyHeader charges requests to the API key in header name (e.g. "X-API-Key"). Keys are
// secrets, so the id holds a SHA-256 digest of the key, never the key: "key:" + 32 hex
// digits. Checking that the key is valid is the application's job.
func APIKeyHeader(name string) KeyFunc {
	return func(r *http.Request) (string, bool) {
		v := strings.TrimSpace(r.Header.Get(name))
		if v == "" {
			return "", false
		}
		sum := sha256.Sum256([]byte(v))
		return "key:" + hex.EncodeToString(sum[:16]), true
	}
}

// ClientIP charges requests to the client's IP address: "ip:" + the address. IPv6 clients
// are grouped by /64, the block one subscriber usually holds.
//
// The address is the TCP peer (RemoteAddr) unless the peer is one of the trusted proxies:
// then X-Forwarded-For is read from the right (the entry the nearest proxy appended) and
// the first address not in trusted is the client. Entries left of that are ignored: a
// client can write anything there. With no trusted prefixes, X-Forwarded-For is never read.
func ClientIP(trusted ...netip.Prefix) KeyFunc {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) (string, bool) {
		addr, ok := peerAddr(r.RemoteAddr)
		if !ok {
			return "", false
		}
		if isTrusted(addr) {
			addr = forwardedClient(r.Header.Values("X-Forwarded-For"), addr, isTrusted)
		}
		return "ip:" + ipID(addr), true
	}
}

func peerAddr(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// forwardedClient walks X-Forwarded-For from the right while the hops are trusted. An entry
// that does not parse stops the walk at the last address known good.
func forwardedClient(headers []string, peer netip.Addr, trusted func(netip.Addr) bool) netip.Addr {
	var hops []string
	for _, h := range headers {
		hops = append(hops, strings.Split(h, ",")...)
	}
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

func ipID(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

// FirstOf tries fns in order and uses the first identity found: e.g. the user when signed
// in, else the API key, else the client IP.
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

// maxIDLen bounds the id written into keys: a longer id (a huge header, say) is replaced by
// a digest so clients cannot make keys of any size.
const maxIDLen = 64

// partitionID makes id safe for a key's hash tag: no braces (which would end the tag early),
// and no more than maxIDLen bytes.
func partitionID(id string) string {
	if len(id) > maxIDLen || strings.ContainsAny(id, "{}") {
		sum := sha256.Sum256([]byte(id))
		return "h:" + hex.EncodeToString(sum[:16])
	}
	return id
}
