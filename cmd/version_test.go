package cmd

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	unset := VersionInfo{Version: "dev", Commit: "none", Date: "unknown"}
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for name, c := range map[string]struct {
		stamp VersionInfo
		info  *debug.BuildInfo
		want  VersionInfo
	}{
		"go install of a tag": {unset, &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}},
			VersionInfo{"v1.4.0", "none", "unknown"}},
		"go install of a commit": {unset, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261125155516-9b72d496ad05"}},
			VersionInfo{"v0.0.0-20261125155516-9b72d496ad05", "9b72d496ad05", "2026-11-25T15:55:16Z"}},
		"build in a clone with changes": {unset, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261125155516-9b72d496ad05+dirty"},
			Settings: vcs("vcs.revision", "9b72d496ad05fe86c7012dddfbe12eafbac111e8", "vcs.time", "2026-11-25T15:55:16Z", "vcs.modified", "true")},
			VersionInfo{"v0.0.0-20261125155516-9b72d496ad05+dirty", "9b72d496ad05fe86c7012dddfbe12eafbac111e8-dirty", "2026-11-25T15:55:16Z"}},
		"a commit stamped, its date from the pseudo-version": {VersionInfo{"dev", "abc", "unknown"},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261125155516-9b72d496ad05"}},
			VersionInfo{"v0.0.0-20261125155516-9b72d496ad05", "abc", "2026-11-25T15:55:16Z"}},
		"nothing recorded": {unset, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, unset},
		"no build info":    {unset, nil, unset},
		"the release stamp wins": {VersionInfo{"1.2.0", "abc", "2026-01-01"},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs("vcs.revision", "ffff", "vcs.time", "2026-11-25T15:55:16Z")},
			VersionInfo{"1.2.0", "abc", "2026-01-01"}},
	} {
		if got := versionFrom(c.stamp, c.info); got != c.want {
			t.Errorf("%s: got %+v, want %+v", name, got, c.want)
		}
	}
}

// TestVersionFlag: --version prints the line the version command prints.
func TestVersionFlag(t *testing.T) {
	run := func(args ...string) string {
		var out bytes.Buffer
		f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out},
			VersionInfo{Version: "v1.4.0", Commit: "9b72d49", Date: "2026-11-25T15:55:16Z"})
		f.Getenv = func(string) string { return "" }
		if code := Run(context.Background(), f, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out.String())
		}
		return out.String()
	}
	want := "bucketctl v1.4.0 (commit 9b72d49, built 2026-11-25T15:55:16Z)\n"
	if got := run("--version"); got != want {
		t.Errorf("--version: %q, want %q", got, want)
	}
	if got := run("version"); got != want {
		t.Errorf("version: %q, want %q", got, want)
	}
}
