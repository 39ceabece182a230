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
		// a word alone is read as a value: user:pw@host without a port hides too, so a key
		// holding an '@' loses its middle (more hidden, never less)
		{"rate:user:bob@example.com", "rate:xxxxx@example.com"},
		{"key rate:user:bob@example.com is no bucket", "key rate:user:bob@example.com is no bucket"},
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
		{"mail ops@example.com", "mail ops@example.com"},
		// a seed with no port, or nothing after the '@'
		{"ops:hunter22@10.0.0.1", "ops:xxxxx@10.0.0.1"},
		{"ops:hunter22@10.0.0.1/0,10.0.0.2:7000", "ops:xxxxx@10.0.0.1/0,10.0.0.2:7000"},
		{"ops:hunter31@", "ops:xxxxx@"},
		{"redis://hunt3r/22@127.0.0.1:1", "redis://xxxxx@127.0.0.1:1"},
		{"unix:///tmp/a@b.sock", "unix:///tmp/a@b.sock"},
		// a password holding a comma, in a list: hidden whole, the other seeds kept
		{"u:pa,ss@h:1,h2:2", "u:xxxxx@h:1,h2:2"},
		{"h0:1, u:se,cr3t@127.0.0.1:1, 127.0.0.1:2", "h0:1, u:xxxxx@127.0.0.1:1, 127.0.0.1:2"},
		// from the first item that is no address on, hidden to the last '@': more than the
		// secret, never less
		{"u:p@x,y@h:1,u:pw@h3:3", "u:xxxxx@h3:3"},
		{"redis://u:pa,ss@h:1,redis://ops@h2:2", "redis://u:xxxxx@h2:2"},
		{"u:hunter2,x//y@127.0.0.1:17431", "u:xxxxx@127.0.0.1:17431"},
		{"redis://u:hunter2,x//y@127.0.0.1:17431", "redis://u:xxxxx@127.0.0.1:17431"},
		{"rediss://u:Zz, redis://q@h:1", "rediss://u:xxxxx@h:1"},
		{"u://hunter2@127.0.0.1:1", "u:xxxxx@127.0.0.1:1"}, // the seed parser reads the password "//hunter2"
		{"u:pw1234@127.0.0.1:1,u:pw1234@127.0.0.1:99999", "u:xxxxx@127.0.0.1:1,u:xxxxx@127.0.0.1:99999"},
		{"10.0.0.1:7000,10.0.0.2:7OOO,10.0.0.3:7000", "10.0.0.1:7000,10.0.0.2:7OOO,10.0.0.3:7000"},
		// a seed with no host (the parser dials localhost)
		{"default:hunter2@:17431", "default:xxxxx@:17431"},
		// a scheme in capitals is the parser's too
		{"REDIS://u:pa,ss@h:1", "REDIS://u:xxxxx@h:1"},
		// a list of URLs, each read whole
		{"redis://ops@h1:1,redis://u:pw@h2:2", "redis://xxxxx@h1:1,redis://u:xxxxx@h2:2"},
		// a secret parameter's value runs to the next parameter
		{"127.0.0.1:1?password=sec ret", "127.0.0.1:1?password=xxxxx"},
		{"redis://h:1/0?password=sec,ret&db=1", "redis://h:1/0?password=xxxxx&db=1"},
	} {
		if got := RedactValue(tc.in); got != tc.want {
			t.Errorf("RedactValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A flag parser's error quotes a connection flag's value whole, Go-quoted.
	if got := Redact(`invalid argument "user:p\"wSECRET@h:1" for "--cluster" flag: bare " in non-quoted-field`); strings.Contains(got, "SECRET") {
		t.Errorf("flag error: %q", got)
	}
	// A user-only URL with a typo is no password; a url field without a scheme is read as
	// the parser reads it.
	if err := TypedPassword("url", "rediss://ops@host:63x9", "fix"); err != nil {
		t.Errorf("a user-only URL refused: %v", err)
	}
	for in, want := range map[string]string{"ops:hunter22@myhost": "redis://ops:xxxxx@myhost", "hunter26@myhost": "redis://xxxxx@myhost", "myhost:6379": "myhost:6379"} {
		if got := redactURLField(in); got != want {
			t.Errorf("redactURLField(%q) = %q, want %q", in, got, want)
		}
	}
	// A socket path holding an '@' is no user info.
	if u, err := parseURL("unix:///tmp/a@b.sock"); err != nil || u.user != "" || u.hasPassword {
		t.Errorf("parseURL of a socket path holding '@': %+v %v", u, err)
	}
	// The URL parser's error never quotes a piece of the password.
	if _, err := parseURL("redis://ops:hunter/22@127.0.0.1:17431"); err == nil || strings.Contains(err.Error(), "hunt") {
		t.Errorf("parseURL of a password holding '/': %v", err)
	}
	// A list given item by item (a config file's) is read joined.
	if got := redactList([]string{"u:pa", "ss@127.0.0.1:1", "127.0.0.1:2"}); strings.Join(got, ",") != "u:xxxxx,xxxxx@127.0.0.1:1,127.0.0.1:2" {
		t.Errorf("redactList = %q", got)
	}
	// A seed password starting with "//" is one, as the seed parser reads it.
	if err := TypedListPassword("cluster", []string{"u://hunter2@127.0.0.1:1"}, "fix"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a seed password starting with //: %v", err)
	}
	// A secret known by value is hidden wherever a server's reply quotes it: next to a
	// letter, a quote mark or an escape sequence too.
	r := &Redactor{}
	r.AddFrom("u:hunter2@127.0.0.1:1")
	got := r.Apply("ERR invalid password «hunter2»; bad argument xhunter2, \x1b[31mhunter2\x1b[0m")
	if strings.Contains(got, "hunter2") {
		t.Errorf("Apply = %q: the secret shows", got)
	}
	// As Redis quotes a value: bytes outside printable ASCII as \xHH.
	r.Add("pässwörd")
	if got := r.Apply(`ERR bad password p\xc3\xa4ssw\xc3\xb6rd`); strings.Contains(got, `xc3`) || !strings.HasSuffix(got, "password xxxxx") {
		t.Errorf("Apply = %q: the secret shows as Redis quotes it", got)
	}
}

// TestTypedListPassword: each address of a typed list is judged alone, so URLs naming a
// user and no password pass, and a password anywhere is refused and shown as xxxxx, also
// one holding a comma that the flag's own splitting cut in two.
func TestTypedListPassword(t *testing.T) {
	t.Parallel()
	err := TypedListPassword("cluster", []string{"u:pa", "ss@127.0.0.1:1", "127.0.0.1:2"}, "fix")
	if err == nil || strings.Contains(err.Error(), "u:pa") || strings.Contains(err.Error(), "ss@") || !strings.Contains(err.Error(), "u:xxxxx@127.0.0.1:1,127.0.0.1:2") {
		t.Fatalf("a password holding a comma, split by the flag: %v", err)
	}
	// The parser's errors quote the list redacted; a typo is still named.
	_, err = parseAddrs([]string{"u:pa", "ss@127.0.0.1:1"})
	if err == nil || strings.Contains(err.Error(), "pa,ss") || strings.Contains(err.Error(), `"pa"`) || !strings.Contains(err.Error(), "a password holding a comma") {
		t.Fatalf("parseAddrs of a password cut at its comma: %v", err)
	}
	_, err = parseAddrs([]string{"u:pw1234@127.0.0.1:1,u:pw1234@127.0.0.1:99999"})
	if err == nil || strings.Contains(err.Error(), "pw1234") || !strings.Contains(err.Error(), `the port "99999" is not a number`) {
		t.Fatalf("parseAddrs of a bad port beside a password: %v", err)
	}
	if err := TypedListPassword("cluster", []string{"redis://ops@10.0.0.1:7000,redis://ops@10.0.0.2:7000"}, "fix"); err != nil {
		t.Fatalf("users without a password refused: %v", err)
	}
	err = TypedListPassword("cluster", []string{"redis://ops@10.0.0.1:7000", "redis://u:Pw1@10.0.0.2:7000"}, "fix")
	if err == nil || strings.Contains(err.Error(), "Pw") ||
		!strings.Contains(err.Error(), "redis://xxxxx@10.0.0.1:7000,redis://u:xxxxx@10.0.0.2:7000") {
		t.Fatalf("a password in a list: %v", err)
	}
}

// TestKeysAreNoSecrets: a key name holding name@provider (every Traefik key) or an e-mail
// address is printed whole in a message; only an address's password is hidden.
func TestKeysAreNoSecrets(t *testing.T) {
	for _, msg := range []string{
		`"rate:myrouter@file:10.5.0.3": not a bucket`,
		`reset "traefik:api@docker:2001:db8::7": left untouched`,
		`"rl:login:bob@example.com" is corrupt`,
		`inspect rate:r@file:10.5.0.3 rate:r@file:10.5.0.4`,
	} {
		if got := Redact(msg); got != msg {
			t.Errorf("Redact(%q) = %q: a key is no secret", msg, got)
		}
	}
	// A seed's password still is, also next to a key.
	if got := Redact(`dial "u:hunter22@10.0.0.1:7000": refused for "rate:a@file:10.5.0.3"`); strings.Contains(got, "hunter22") ||
		!strings.Contains(got, "rate:a@file:10.5.0.3") {
		t.Errorf("Redact: %q", got)
	}
}
