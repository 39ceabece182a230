//go:build linux

package sandbox

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary re-runs itself as a helper that starts a child through
// StartProcess and prints the child's pid; the test SIGKILLs the helper, so
// no cleanup runs, and expects the kernel to kill the child.
func TestMain(m *testing.M) {
	if os.Getenv("SANDBOX_PDEATHSIG_HELPER") == "1" {
		p, err := StartProcess("sleep", []string{"60"}, ProcessOptions{Dir: os.TempDir(), LogPath: os.DevNull})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(p.Pid()) + "\n")
		select {}
	}
	os.Exit(m.Run())
}

func TestChildDiesWithParent(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "SANDBOX_PDEATHSIG_HELPER=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("helper gave no child pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("helper printed %q", line)
	}
	if !alive(pid) {
		t.Fatalf("child %d not running while the helper lives", pid)
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()

	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still alive 5s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid runs and is not a zombie (a reaper may be slow
// to collect an orphan).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE ...; comm may hold spaces, so split after ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}
