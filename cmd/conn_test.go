package cmd

import (
	"testing"
)

// TestSentinelCredentialsAreSeparate: the data nodes' password never goes to the sentinels
// unless asked for; the sentinels' own user and password come from their own flag and env.
func TestSentinelCredentialsAreSeparate(t *testing.T) {
	t.Parallel()
	conn := func(args ...string) *ConnOptions {
		t.Helper()
		io, _, _, _ := TestIO()
		f := newTestFactory(t, io, VersionInfo{})
		root := NewCmdRoot(f)
		if err := root.PersistentFlags().Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := root.PersistentPreRunE(root, nil); err != nil {
			t.Fatal(err)
		}
		o, err := f.Conn()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	setEnv(t, "BUCKETCTL_PASSWORD", "data-secret")
	o := conn("--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:1,127.0.0.1:2", "--user", "app")
	if o.password != "data-secret" || o.User != "app" || o.sentinelPassword != "" || o.SentinelUser != "" {
		t.Fatalf("sentinels would get the data nodes' credentials: %+v", o)
	}
	if len(o.SentinelAddrs) != 2 {
		t.Fatalf("sentinel addrs %v", o.SentinelAddrs)
	}
	setEnv(t, "BUCKETCTL_SENTINEL_PASSWORD", "sentinel-secret")
	o = conn("--sentinel-master", "m", "--sentinel-addrs", "127.0.0.1:1", "--sentinel-user", "watcher")
	if o.sentinelPassword != "sentinel-secret" || o.SentinelUser != "watcher" || o.password != "data-secret" {
		t.Fatalf("sentinel credentials: %+v", o)
	}
}
