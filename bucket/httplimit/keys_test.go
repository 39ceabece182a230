package httplimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/httplimit"
)

func TestClientIP(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	cases := []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"peer", "203.0.113.7:5555", nil, nil, "ip:203.0.113.7"},
		{"XFF ignored without trusted proxies", "203.0.113.7:5555", []string{"198.51.100.1"}, nil, "ip:203.0.113.7"},
		{"XFF ignored from an untrusted peer", "203.0.113.7:5555", []string{"198.51.100.1"}, proxies, "ip:203.0.113.7"},
		{"one trusted proxy", "10.1.2.3:80", []string{"198.51.100.1"}, proxies, "ip:198.51.100.1"},
		{"spoofed left entries ignored", "10.1.2.3:80", []string{"1.1.1.1, 198.51.100.1, 10.9.9.9"}, proxies, "ip:198.51.100.1"},
		{"several headers", "10.1.2.3:80", []string{"1.1.1.1", "198.51.100.1", "10.9.9.9"}, proxies, "ip:198.51.100.1"},
		{"all trusted: leftmost", "10.1.2.3:80", []string{"10.0.0.1, 10.0.0.2"}, proxies, "ip:10.0.0.1"},
		{"garbage stops at the last good hop", "10.1.2.3:80", []string{"198.51.100.1, junk, 10.0.0.5"}, proxies, "ip:10.0.0.5"},
		{"no XFF from a trusted peer", "10.1.2.3:80", nil, proxies, "ip:10.1.2.3"},
		{"IPv6 grouped by /64", "[2001:db8:1:2:3:4:5:6]:443", nil, nil, "ip:2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6", "[::ffff:203.0.113.9]:1", nil, nil, "ip:203.0.113.9"},
		{"IPv6 proxy", "[fd00::1]:1", []string{"2001:db8::99"}, proxies, "ip:2001:db8::/64"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		got, ok := httplimit.ClientIP(c.trusted...)(r)
		if !ok || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, got, ok, c.want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "not an address"
	if id, ok := httplimit.ClientIP()(r); ok {
		t.Errorf("unparsable RemoteAddr gave %q", id)
	}
}

type ctxKey struct{}

func TestIdentityKeys(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.1:1000"
	if _, ok := httplimit.UserHeader("X-User")(r); ok {
		t.Error("UserHeader found a user in a request without the header")
	}
	if _, ok := httplimit.UserContext(ctxKey{})(r); ok {
		t.Error("UserContext found a user in a bare context")
	}
	r.Header.Set("X-User", " 42 ")
	if id, _ := httplimit.UserHeader("X-User")(r); id != "user:42" {
		t.Errorf("UserHeader = %q", id)
	}
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, 7))
	if id, _ := httplimit.UserContext(ctxKey{})(r); id != "user:7" {
		t.Errorf("UserContext = %q", id)
	}
	r.Header.Set("X-API-Key", "sk_live_secret")
	id, ok := httplimit.APIKeyHeader("X-API-Key")(r)
	if !ok || !strings.HasPrefix(id, "key:") || len(id) != 4+32 || strings.Contains(id, "secret") {
		t.Errorf("APIKeyHeader = %q: want a digest, never the key", id)
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("X-API-Key", "sk_live_other")
	if id2, _ := httplimit.APIKeyHeader("X-API-Key")(r2); id2 == id {
		t.Error("two API keys share an id")
	}
	chain := httplimit.FirstOf(httplimit.APIKeyHeader("X-Missing"), httplimit.UserHeader("X-User"), httplimit.ClientIP())
	if id, _ := chain(r); id != "user:42" {
		t.Errorf("FirstOf = %q, want the user", id)
	}
	if id, _ := httplimit.FirstOf(httplimit.UserHeader("X-Missing"), httplimit.ClientIP())(r); id != "ip:192.0.2.1" {
		t.Errorf("FirstOf fallback = %q, want the IP", id)
	}
}

func TestRoutes(t *testing.T) {
	rt, err := httplimit.NewRoutes(1, map[string]float64{
		"POST /reports":   10,
		"GET /items/{id}": 0.5,
		"/static/":        0,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path, pattern string
		cost                  float64
	}{
		{"POST", "/reports", "POST /reports", 10},
		{"GET", "/reports", "*", 1},
		{"GET", "/items/42", "GET /items/{id}", 0.5},
		{"HEAD", "/items/42", "GET /items/{id}", 0.5},
		{"GET", "/static/css/a.css", "/static/", 0},
		{"GET", "/elsewhere", "*", 1},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		if got := rt.Cost(r); got != c.cost {
			t.Errorf("%s %s: cost %v, want %v", c.method, c.path, got, c.cost)
		}
		if got := rt.Pattern(r); got != c.pattern {
			t.Errorf("%s %s: pattern %q, want %q", c.method, c.path, got, c.pattern)
		}
	}
	for name, table := range map[string]map[string]float64{
		"bad pattern":   {"GET /{": 1},
		"conflict":      {"GET /a/{x}": 1, "GET /a/{y}": 2},
		"negative cost": {"/a": -1},
	} {
		if _, err := httplimit.NewRoutes(1, table); err == nil {
			t.Errorf("%s: NewRoutes accepted it", name)
		}
	}
	if _, err := httplimit.NewRoutes(-1, nil); err == nil {
		t.Error("NewRoutes accepted a negative default")
	}
	var _ func(*http.Request) float64 = rt.Cost // fits Config.Cost and Tier.Cost
}
