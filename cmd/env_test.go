package cmd

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestEnvBetweenFlagsAndConfig: a flag wins over its BUCKETCTL_<FLAG> variable, which wins
// over the config file's context; the variables come from the Factory's environment.
func TestEnvBetweenFlagsAndConfig(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	writeConfig(t, "current-context: dead\ncontexts:\n  dead: {url: \"redis://127.0.0.1:1\"}\n")
	consume := func(args ...string) result {
		return run(t, "", append(args, "consume", "k", "--capacity", "5", "--rate", "1")...)
	}
	exists := func(srv *redistest.Server) bool {
		return srv.Client(t).Exists(context.Background(), "k").Val() == 1
	}

	if r := consume(); r.code != ExitUnreachable || !strings.Contains(r.errOut, "127.0.0.1:1") {
		t.Fatalf("the config's context: exit %d %q, want %d naming 127.0.0.1:1", r.code, r.errOut, ExitUnreachable)
	}
	setEnv(t, "BUCKETCTL_URL", a.URL())
	if r := consume(); r.code != ExitOK || !exists(a) || exists(b) {
		t.Fatalf("BUCKETCTL_URL over the context: exit %d %q, on a %v, on b %v", r.code, r.errOut, exists(a), exists(b))
	}
	if r := consume("--url", b.URL()); r.code != ExitOK || !exists(b) {
		t.Fatalf("--url over BUCKETCTL_URL: exit %d %q, on b %v", r.code, r.errOut, exists(b))
	}

	// Not only strings: a bad BUCKETCTL_CLOCK is the flag's usage error, and the flag wins.
	setEnv(t, "BUCKETCTL_CLOCK", "sundial")
	if r := consume(); r.code != ExitUsage || !strings.Contains(r.errOut, `--clock "sundial"`) {
		t.Fatalf("BUCKETCTL_CLOCK=sundial: exit %d %q", r.code, r.errOut)
	}
	if r := consume("--clock", "server"); r.code != ExitOK {
		t.Fatalf("--clock over BUCKETCTL_CLOCK: exit %d %q", r.code, r.errOut)
	}
}

// TestUserConfigDir: the config file's default location from the Factory's environment is
// where os.UserConfigDir puts it.
func TestUserConfigDir(t *testing.T) {
	t.Parallel()
	osDir, err := os.UserConfigDir()
	if err != nil {
		osDir = ""
	}
	if got := userConfigDir(runtime.GOOS, os.Getenv); got != osDir {
		t.Errorf("from the process environment: %q, os.UserConfigDir %q", got, osDir)
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		goos string
		env  func(string) string
		want string
	}{
		{"linux", env("XDG_CONFIG_HOME", "/x", "HOME", "/h"), "/x"},
		{"linux", env("HOME", "/h"), "/h/.config"},
		{"linux", env("XDG_CONFIG_HOME", "rel", "HOME", "/h"), ""},
		{"linux", env(), ""},
		{"darwin", env("XDG_CONFIG_HOME", "/x", "HOME", "/h"), "/h/Library/Application Support"},
	} {
		if got := userConfigDir(c.goos, c.env); got != c.want {
			t.Errorf("%s: %q, want %q", c.goos, got, c.want)
		}
	}
	f := newTestFactory(t, &IOStreams{}, VersionInfo{})
	if got, want := f.DefaultConfigPath(), getEnv(t, "XDG_CONFIG_HOME")+"/bucketctl/config.yaml"; got != want {
		t.Errorf("the Factory's default config path %q, want %q", got, want)
	}
}
