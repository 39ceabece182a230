package cmd

import (
	"strings"
	"testing"
)

// TestUnknownCommands: a mistyped command or subcommand is one line with a suggestion,
// exit 2; a group alone prints its help.
func TestUnknownCommands(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lst"}, `bucketctl: unknown command "lst": did you mean "list"?`},
		{[]string{"script", "bogus"}, `bucketctl: unknown command "bogus" of 'bucketctl script' (see 'bucketctl script --help')`},
		{[]string{"script", "sho"}, `bucketctl: unknown command "sho" of 'bucketctl script': did you mean "show"?`},
		{[]string{"zzzzzz"}, `bucketctl: unknown command "zzzzzz" (see 'bucketctl --help')`},
	} {
		r := run(t, "", tc.args...)
		if r.code != ExitUsage || strings.TrimRight(r.errOut, "\n") != tc.want || r.out != "" {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, r.code, r.errOut, tc.want)
		}
	}
	if r := run(t, "", "script"); r.code != ExitOK || !strings.Contains(r.out, "Available Commands") {
		t.Errorf("script alone: exit %d %q", r.code, r.out)
	}
}
