package cmd

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// built is bucketctl as buildBinary built it, once for every test that runs it.
var built struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

// buildBinary builds bucketctl once per test binary (TestMain removes it).
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "bucketctl-test-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "bucketctl")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, "..").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	// In-process load runs leave the test binary's processors as they are (loadProcs).
	os.Setenv("GOMAXPROCS", strconv.Itoa(runtime.GOMAXPROCS(0)))
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestBinaryEndToEnd runs the built binary as a user would: piped demo, exit codes.
func TestBinaryEndToEnd(t *testing.T) {
	isolate(t)
	bin := buildBinary(t)

	// Piped, a line a second; Ctrl-C after two ends it cleanly. (Not a --duration: the
	// sandbox's start, slow on a loaded machine, would leave it fewer seconds.)
	demo := exec.Command(bin, "demo", "--duration", "10m")
	demoOut, err := demo.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := demo.Start(); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(demoOut)
	var lines []string
	for len(lines) < 2 {
		line, err := rd.ReadString('\n')
		if err != nil {
			_ = demo.Process.Kill()
			t.Fatalf("demo piped printed %q, then %v", lines, err)
		}
		lines = append(lines, line)
	}
	if err := demo.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := demo.Wait(); exitCode(err) != 0 || !strings.Contains(lines[0], "api:user:alice") {
		t.Fatalf("demo piped: %v, printed %q", err, lines)
	}

	out, err := exec.Command(bin, "demo", "--duration", "1500ms", "--in-process").CombinedOutput()
	if exitCode(err) != 0 || !strings.Contains(string(out), "in-process") {
		t.Fatalf("demo in-process: %v %s", err, out)
	}

	srv := redistest.Start(t)
	args := []string{"--url", srv.URL(), "consume", "e2e", "--capacity", "1", "--rate", "0.01"}
	if err := exec.Command(bin, args...).Run(); exitCode(err) != ExitOK {
		t.Fatalf("first consume: %v", err)
	}
	if err := exec.Command(bin, args...).Run(); exitCode(err) != ExitDenied {
		t.Fatalf("second consume: exit %d, want %d", exitCode(err), ExitDenied)
	}
	out, err = exec.Command(bin, "--url", "redis://127.0.0.1:1", "inspect", "x").CombinedOutput()
	if exitCode(err) != ExitUnreachable || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
		t.Fatalf("unreachable: exit %d %q", exitCode(err), out)
	}
	out, _ = exec.Command(bin, "version").Output()
	if !strings.HasPrefix(string(out), "bucketctl ") {
		t.Fatalf("version: %q", out)
	}

	// Ctrl-C stops a long-running command cleanly: exit 130, not death by the signal.
	watch := exec.Command(bin, "--url", srv.URL(), "watch", "e2e", "-i", "50ms", "-o", "json")
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"key":"e2e"`) {
		t.Fatalf("watch -o json: first line %q, %v", line, err)
	}
	if err := watch.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := watch.Wait(); exitCode(err) != ExitInterrupted {
		t.Fatalf("watch after Ctrl-C: %v, want exit %d", err, ExitInterrupted)
	}
}
