package main

import (
	"bytes"
	"context"
	"html"
	"os"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd"
)

// bucketctl runs the command line in-process, piped, as `bucketctl ARGS` does.
func bucketctl(args ...string) (code int, stderr string) {
	var out, errOut bytes.Buffer
	f := cmd.NewFactory(&cmd.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, cmd.VersionInfo{Version: "test"})
	f.Getenv = func(k string) string {
		if k == "HOME" || k == "XDG_CONFIG_HOME" {
			return "/nonexistent"
		}
		return ""
	}
	return cmd.Run(context.Background(), f, args), errOut.String()
}

// TestPicturesCommandsRun: every picture's command still runs (piped and shortened), so a
// renamed command or flag fails here before a picture shows something that is gone; and
// every picture is committed, titled with its command, and shown in the README.
func TestPicturesCommandsRun(t *testing.T) {
	srv := redistest.Start(t)
	if code, e := bucketctl("--url", srv.Addr(), "consume", demoKey, "--capacity", "10", "--rate", "2/s"); code != 0 {
		t.Fatalf("seeding %s: exit %d %s", demoKey, code, e)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shots {
		args := append([]string{"--url", srv.Addr()}, s.args...)
		switch s.args[0] {
		case "demo":
			args = append(s.args, "--in-process", "--duration", "1s")
		case "watch":
			args = append(args, "--count", "1")
		case "load":
			args = append(args, "--duration", "300ms")
		}
		if code, e := bucketctl(args...); code != 0 {
			t.Errorf("%s: %v: exit %d: %s", s.file, args, code, e)
		}
		if !strings.HasPrefix(s.title, "bucketctl "+s.args[0]) {
			t.Errorf("%s: title %q does not show its command %v", s.file, s.title, s.args)
		}
		b, err := os.ReadFile(s.file)
		if err != nil {
			t.Errorf("%s is not committed: run make screenshots", s.file)
			continue
		}
		if !strings.Contains(string(b), "$ "+html.EscapeString(s.title)+"</text>") {
			t.Errorf("%s was drawn from another command than %q: run make screenshots", s.file, s.title)
		}
		if !bytes.Contains(readme, []byte("(scripts/screenshots/"+s.file+")")) {
			t.Errorf("README does not show %s", s.file)
		}
	}
}
