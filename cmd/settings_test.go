package cmd

import (
	"strings"
	"testing"
	"time"
)

// TestSettings: a flag given wins over BUCKETCTL_<FLAG>, which wins over the default; a
// malformed variable is a usage error naming it. The environment comes from the Factory,
// so this test runs in parallel.
func TestSettings(t *testing.T) {
	t.Parallel()
	env := map[string]string{"BUCKETCTL_TIMEOUT": "7s", "BUCKETCTL_CLUSTER": "a:1,b:2 c:3", "BUCKETCTL_NO_COLOR": "1", "BUCKETCTL_USER": "envuser"}
	io, _, _, _ := TestIO()
	f := NewFactory(io, VersionInfo{})
	f.Getenv = func(k string) string { return env[k] }
	root := NewCmdRoot(f)
	if err := root.PersistentFlags().Parse([]string{"--user", "flaguser"}); err != nil {
		t.Fatal(err)
	}
	if err := root.PersistentPreRunE(root, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.V.GetDuration("timeout"); got != 7*time.Second {
		t.Errorf("timeout from the environment: %v", got)
	}
	if got := f.V.GetDuration("dial-timeout"); got != 5*time.Second {
		t.Errorf("dial-timeout default: %v", got)
	}
	if got := strings.Join(f.V.GetStringSlice("cluster"), " "); got != "a:1 b:2 c:3" {
		t.Errorf("cluster from the environment: %q", got)
	}
	if !f.V.GetBool("no-color") || !f.IO.NoColor {
		t.Error("BUCKETCTL_NO_COLOR=1 not honoured")
	}
	if got := f.V.GetString("user"); got != "flaguser" {
		t.Errorf("the flag should win over the environment: %q", got)
	}
	env["BUCKETCTL_DIAL_TIMEOUT"] = "soon"
	if err := root.PersistentPreRunE(root, nil); err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "BUCKETCTL_DIAL_TIMEOUT") {
		t.Errorf("malformed BUCKETCTL_DIAL_TIMEOUT: %v", err)
	}
}
