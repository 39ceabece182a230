package cmd

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd/output"
)

// Stamped in by the release build (-ldflags -X); they win over what Go records.
var (
	version = "dev"
	commit  = "none"
	date    = "unknown"
)

// buildVersion is the release build's stamp, else what Go records in every build.
func buildVersion() VersionInfo {
	info, _ := debug.ReadBuildInfo()
	return versionFrom(VersionInfo{Version: version, Commit: commit, Date: date}, info)
}

// versionFrom fills what the stamp leaves unset from info: the module version of 'go
// install' (a pseudo-version names the commit and its time), or a clone's revision.
func versionFrom(v VersionInfo, info *debug.BuildInfo) VersionInfo {
	if info == nil {
		return v
	}
	if v.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v.Version = info.Main.Version
	}
	var rev, when string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	// Compiled only for a pseudo-version (v0.0.0-20260102150405-abcdef123456).
	if rev == "" && (v.Commit == "none" || v.Date == "unknown") && strings.Count(info.Main.Version, "-") >= 2 {
		pseudo := regexp.MustCompile(`-(?:0\.)?(\d{14})-([0-9a-f]{12})(?:\+dirty)?$`)
		if m := pseudo.FindStringSubmatch(info.Main.Version); m != nil {
			rev = m[2]
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				when = t.UTC().Format(time.RFC3339)
			}
		}
	}
	if v.Commit == "none" && rev != "" {
		v.Commit = rev
		if modified {
			v.Commit += "-dirty"
		}
	}
	if v.Date == "unknown" && when != "" {
		v.Date = when
	}
	return v
}

// line is 'bucketctl VERSION (commit C, built D)'.
func (v VersionInfo) line() string {
	return fmt.Sprintf("bucketctl %s (commit %s, built %s)", v.Version, v.Commit, v.Date)
}

// NewCmdVersion prints the version, as --version does.
func NewCmdVersion(f *Factory) *cobra.Command {
	var outFormat string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Print the version, commit and build date: a release's stamp, or what Go records in
every build (the module version of 'go install', the commit of a build from a clone, with
-dirty when the tree had changes). 'bucketctl --version' prints the same line.`,
		Example: "  bucketctl version\n  bucketctl --version\n  bucketctl version -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]string{"version": f.Version.Version, "commit": f.Version.Commit, "date": f.Version.Date}
			if outFormat != output.FormatTable {
				return output.WriteData(f.IO.Out, outFormat, v)
			}
			_, err := fmt.Fprintln(f.IO.Out, f.Version.line())
			return err
		},
	}
	addOutputFlag(cmd, &outFormat)
	return cmd
}
