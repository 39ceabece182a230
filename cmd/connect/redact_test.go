package connect

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"redis://u:Secret@host:6379/%zz", "redis://u:xxxxx@host:6379/%zz"},
		{"redis://:p/a@ss@host:6379", "redis://:xxxxx@host:6379"},
		{"rediss://user:pw@host", "rediss://user:xxxxx@host"},
		{"redis://user@host:6379", "redis://xxxxx@host:6379"}, // redis-cli: a password
		{"redis://S3cr3tPW@127.0.0.1:1", "redis://xxxxx@127.0.0.1:1"},
		{"//u:S3cr3tPW@127.0.0.1:1", "//u:xxxxx@127.0.0.1:1"},
		{"redis ://u:S3cr3tPW@127.0.0.1:1", "redis ://u:xxxxx@127.0.0.1:1"},
		{"--url //u:S3cr3tPW@h:1: invalid URL scheme", "--url //u:xxxxx@h:1: invalid URL scheme"},
		{"see redis://S3cr3tPW@h:1 here", "see redis://xxxxx@h:1 here"},
		{"unix:///run/a@b.sock", "unix:///run/a@b.sock"},
		{"redis://u:pa,ss@127.0.0.1:1", "redis://u:xxxxx@127.0.0.1:1"},
		{"redis://pa,ss@127.0.0.1:1", "redis://xxxxx@127.0.0.1:1"},
		{`redis://u:pa"ss'x@127.0.0.1:1`, "redis://u:xxxxx@127.0.0.1:1"},
		{"u:pa'ss@127.0.0.1:7000", "u:xxxxx@127.0.0.1:7000"},
		{`u:pa"ss@[::1]:7000`, "u:xxxxx@[::1]:7000"},
		{"redis://host:6379/0", "redis://host:6379/0"},
		{"unix:///tmp/redis.sock", "unix:///tmp/redis.sock"},
		{"unix://:pw@/tmp/redis.sock?db=1", "unix://:xxxxx@/tmp/redis.sock?db=1"},
		{"redis://default:p%40ss@[::1]:6379/0", "redis://default:xxxxx@[::1]:6379/0"},
		{"redis://h:1/0?password=a&db=2#x", "redis://h:1/0?password=xxxxx&db=2#x"},
		{"redis://h:1?PASS=a&PWD=b&authToken=c&client_secret=d&api-key=e&db=0", "redis://h:1?PASS=xxxxx&PWD=xxxxx&authToken=xxxxx&client_secret=xxxxx&api-key=xxxxx&db=0"},
		{"redis://h:1?db=0;pass=x", "redis://h:1?db=0;pass=xxxxx"},
		{"ops:pw1@10.0.0.1:7000,10.0.0.2:7000,:pw2@10.0.0.3:7000", "ops:xxxxx@10.0.0.1:7000,10.0.0.2:7000,:xxxxx@10.0.0.3:7000"},
		{"cluster redis://u:pw@10.0.0.1:7000,redis://u:pw@10.0.0.2:7000", "cluster redis://u:xxxxx@10.0.0.1:7000,redis://u:xxxxx@10.0.0.2:7000"},
		{`dial "u:pw@h:1": refused`, `dial "u:xxxxx@h:1": refused`},
		{"rate:user:bob@example.com", "rate:user:bob@example.com"},
		{"dial tcp 10.0.0.1:6379: connect: connection refused", "dial tcp 10.0.0.1:6379: connect: connection refused"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	r := &Redactor{}
	r.Add("S3cret/x")
	msg := r.Apply(`parse "redis://u:S3cret%2Fx@h/%zz": bad; AUTH S3cret/x; see redis://a:b@c`)
	if strings.Contains(msg, "S3cret") || strings.Contains(msg, ":b@") {
		t.Fatalf("redactor left a secret: %q", msg)
	}
}

// TestRedactValue: a value's secret is found where the parsers find it, whatever it holds
// (a space, a comma); a list is read address by address when every one is an address.
func TestRedactValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"redis://u:secret pw@127.0.0.1:1", "redis://u:xxxxx@127.0.0.1:1"},
		{"u:secret pw@127.0.0.1:7000", "u:xxxxx@127.0.0.1:7000"},
		{"u:pa,ss@127.0.0.1:7000", "u:xxxxx@127.0.0.1:7000"},
		{"h1:7000,u:p@w@h2:7000", "h1:7000,u:xxxxx@h2:7000"},
		{"ops:pw1@10.0.0.1:7000, 10.0.0.2:7000", "ops:xxxxx@10.0.0.1:7000, 10.0.0.2:7000"},
		{"ops@10.0.0.1:7000", "ops@10.0.0.1:7000"}, // a seed's user, as go-redis reads it
		{"rate:user:bob@example.com", "rate:user:bob@example.com"},
		{"mail ops@example.com", "mail ops@example.com"},
	} {
		if got := RedactValue(tc.in); got != tc.want {
			t.Errorf("RedactValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A secret known by value is hidden where it stands alone, not inside a longer word.
	r := &Redactor{}
	r.AddFrom("u:pass@127.0.0.1:1")
	got := r.Apply("--url u:pass@127.0.0.1:1 holds a password (password-env); AUTH pass failed")
	if want := "--url u:xxxxx@127.0.0.1:1 holds a password (password-env); AUTH xxxxx failed"; got != want {
		t.Errorf("Apply = %q, want %q", got, want)
	}
}

// TestTypedListPassword: each address of a typed list is judged alone, so URLs naming a
// user and no password pass, and a password anywhere is refused and shown as xxxxx.
func TestTypedListPassword(t *testing.T) {
	t.Parallel()
	if err := TypedListPassword("cluster", []string{"redis://ops@10.0.0.1:7000,redis://ops@10.0.0.2:7000"}, "fix"); err != nil {
		t.Fatalf("users without a password refused: %v", err)
	}
	err := TypedListPassword("cluster", []string{"redis://ops@10.0.0.1:7000", "redis://u:Pw1@10.0.0.2:7000"}, "fix")
	if err == nil || strings.Contains(err.Error(), "Pw") ||
		!strings.Contains(err.Error(), "redis://xxxxx@10.0.0.1:7000,redis://u:xxxxx@10.0.0.2:7000") {
		t.Fatalf("a password in a list: %v", err)
	}
}
