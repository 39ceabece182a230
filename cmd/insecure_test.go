package cmd

import (
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestInsecureIsLoud: a run that skips TLS verification, by the flag, its variable or a
// context, prints one warning line on stderr naming where the setting came from, and
// still works; a verified run prints none; config get-contexts shows the insecure context.
func TestInsecureIsLoud(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithTLS())
	ca, _, _ := srv.TLSFiles()
	const warning = "bucketctl: warning: the server's TLS certificate is not verified ("
	for _, tc := range []struct {
		name, source string
		env          map[string]string
		args         []string
	}{
		{"flag", "(--insecure-skip-verify)", nil, []string{"--url", srv.URL(), "--insecure-skip-verify"}},
		{"variable", "(BUCKETCTL_INSECURE_SKIP_VERIFY)", map[string]string{"BUCKETCTL_INSECURE_SKIP_VERIFY": "true"}, []string{"--url", srv.URL()}},
		{"context", `(context "lax"'s insecure-skip-verify)`, nil, []string{"--context", "lax"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			writeConfig(t, "contexts:\n  lax: {url: \""+srv.URL()+"\", insecure-skip-verify: true}\n  strict: {url: \""+srv.URL()+"\", tls-ca: \""+ca+"\"}\n")
			r := runEnv(t, tc.env, "", append(tc.args, "consume", "k", "--capacity", "5", "--rate", "1")...)
			if r.code != ExitOK || strings.Count(r.errOut, "\n") != 1 || !strings.HasPrefix(r.errOut, warning) ||
				!strings.Contains(r.errOut, tc.source) || !strings.Contains(r.errOut, srv.Addr()) || !strings.Contains(r.errOut, "--tls-ca") {
				t.Fatalf("exit %d, stderr %q: want one warning naming %s", r.code, r.errOut, tc.source)
			}
			if tc.env == nil {
				if r := run(t, "", "--context", "strict", "inspect", "k"); r.code != ExitOK || r.errOut != "" {
					t.Fatalf("a verified run: exit %d, stderr %q", r.code, r.errOut)
				}
			}
			r = run(t, "", "config", "get-contexts")
			if !strings.Contains(contextLine(r.out, "lax"), "INSECURE") || strings.Contains(contextLine(r.out, "strict"), "INSECURE") {
				t.Fatalf("get-contexts:\n%s", r.out)
			}
			if r := run(t, "", "config", "get-contexts", "lax", "-o", "json"); !strings.Contains(r.out, `"insecure-skip-verify": true`) {
				t.Fatalf("get-contexts -o json: %s", r.out)
			}
		})
	}
}
