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
		{"redis://user@host:6379", "redis://user@host:6379"},
		{"redis://host:6379/0", "redis://host:6379/0"},
		{"unix:///tmp/redis.sock", "unix:///tmp/redis.sock"},
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
