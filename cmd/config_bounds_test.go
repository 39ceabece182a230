package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestConfigFileBounded: a config file that is not a regular file of at most 1 MiB holding
// one YAML document (a device, a FIFO, a directory, a 2 MiB file, two documents) is exit 2,
// one line naming the file and the limit, read before anything reaches Redis; the FIFO is
// never opened (it would block) and /dev/zero never read (it would fill the memory). A
// trailing '---' is no second document, and a file of exactly 1 MiB is read.
func TestConfigFileBounded(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rules := "rules: [{match: 'k', capacity: 5, rate: 1}]\n"
	consume := []string{"consume", "k"}
	for _, tc := range []struct {
		name, path string
		want       []string
	}{
		{"a device", "/dev/zero", []string{"config file /dev/zero: not a regular file (a device)", "at most 1 MiB"}},
		{"a FIFO", fifo, []string{"config file " + fifo + ": not a regular file (a FIFO)", "at most 1 MiB"}},
		{"a directory", dir, []string{"not a regular file (a directory)"}},
		{"over 1 MiB", write("big.yaml", rules+"#"+strings.Repeat("x", 2<<20)+"\n"), []string{"big.yaml: over the limit of 1 MiB"}},
		{"two documents", write("two.yaml", "contexts: {}\n---\n"+rules), []string{"two.yaml, line 3: a second YAML document"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, srv.URL(), append([]string{"--config", tc.path}, consume...)...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d %q, want %d", r.code, r.errOut, ExitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.errOut, w) {
					t.Fatalf("stderr %q lacks %q", r.errOut, w)
				}
			}
			oneLine(t, r)
		})
	}
	if n := srv.Client(t).DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("%d keys written under a refused config file", n)
	}
	exact := rules + "#" + strings.Repeat("x", 1<<20-len(rules)-2) + "\n"
	for _, p := range []string{write("trailing.yaml", rules+"---\n"), write("exact.yaml", exact)} {
		if r := run(t, srv.URL(), append([]string{"--config", p, "--timeout", "20s"}, consume...)...); r.code != ExitOK {
			t.Fatalf("--config %s: exit %d %q", filepath.Base(p), r.code, r.errOut)
		}
	}
}
