package cmd

import (
	"context"
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

// TestDefaultConfigPath: the Factory's default config file is under the test's
// XDG_CONFIG_HOME.
func TestDefaultConfigPath(t *testing.T) {
	t.Parallel()
	f := newTestFactory(t, &IOStreams{}, VersionInfo{})
	if got, want := f.DefaultConfigPath(), getEnv(t, "XDG_CONFIG_HOME")+"/bucketctl/config.yaml"; got != want {
		t.Errorf("the Factory's default config path %q, want %q", got, want)
	}
}
