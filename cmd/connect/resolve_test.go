package connect

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/spf13/pflag"
)

// resolveArgs resolves the server for args, over env and a config file holding cfgBody
// ("" for none), as the command line does.
func resolveArgs(t *testing.T, env map[string]string, cfgBody string, args ...string) (*Server, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs, "", nil)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return env[k] }
	if err := BindEnv(fs, getenv, func(_ *pflag.Flag, err error) string { return err.Error() }); err != nil {
		return nil, err
	}
	path := ""
	if cfgBody != "" {
		path = filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(cfgBody), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := Load(path, "")
	if err != nil {
		return nil, err
	}
	return Resolve(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, cfg)
}

// TestSentinelCredentialsAreSeparate: the data nodes' password never goes to the sentinels
// unless asked for; the sentinels' own user and password come from their own flag and env.
func TestSentinelCredentialsAreSeparate(t *testing.T) {
	t.Parallel()
	env := map[string]string{"BUCKETCTL_PASSWORD": "data-secret"}
	conn := func(args ...string) *Server {
		t.Helper()
		o, err := resolveArgs(t, env, "", args...)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o := conn("--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:1,127.0.0.1:2", "--user", "app")
	if o.password != "data-secret" || o.User != "app" || o.sentinelPassword != "" || o.SentinelUser != "" {
		t.Fatalf("sentinels would get the data nodes' credentials: %+v", o)
	}
	if len(o.SentinelAddrs) != 2 {
		t.Fatalf("sentinel addrs %v", o.SentinelAddrs)
	}
	env["BUCKETCTL_SENTINEL_PASSWORD"] = "sentinel-secret"
	o = conn("--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:1", "--sentinel-user", "watcher")
	if o.sentinelPassword != "sentinel-secret" || o.SentinelUser != "watcher" || o.password != "data-secret" {
		t.Fatalf("sentinel credentials: %+v", o)
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
}

func TestClosest(t *testing.T) {
	t.Parallel()
	names := []string{"url", "user", "cluster", "password-env"}
	for in, want := range map[string]string{"uri": "url", "usr": "user", "clustr": "cluster", "password_env": "password-env", "qqqqqq": "", "x": ""} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
