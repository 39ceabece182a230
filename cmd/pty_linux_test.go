package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// openPTY opens a pseudo-terminal pair: what the child writes to tty is read from ptmx.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ptmx.Close() })
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ptmx, tty
}

// onTerminal runs the binary with a terminal (a PTY that never answers a query) as its
// stdin, stdout and stderr, in the terminal's foreground, and returns what it wrote.
func onTerminal(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	ptmx, tty := openPTY(t)
	c := exec.Command(bin, args...)
	c.Stdin, c.Stdout, c.Stderr = tty, tty, tty
	c.Env = append(os.Environ(), "TERM=xterm-256color", "NO_COLOR=")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	_ = tty.Close()
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		_, _ = io.Copy(&out, ptmx) // ends with EIO once the child has gone
		close(read)
	}()
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(20 * time.Second):
		_ = c.Process.Kill()
		t.Fatalf("%v on a terminal did not end within 20 s; it wrote %q", args, out.String())
	}
	<-read
	return out.String(), exitCode(err)
}

// TestNoTerminalQueryAtStart: on a terminal, commands write no query to it (bubbletea's
// init used to ask for the background colour, OSC 11, and wait up to 5 s for a terminal
// that never answers). What they print is there, and nothing else precedes it.
func TestNoTerminalQueryAtStart(t *testing.T) {
	isolate(t)
	bin := buildBinary(t)
	srv := redistest.Start(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "bucketctl"},
		{[]string{"--url", srv.URL(), "consume", "tty", "--capacity", "5", "--rate", "1"}, "allowed"},
		{[]string{"--url", srv.URL(), "inspect", "tty", "-o", "json"}, `"key": "tty"`},
	} {
		args := tc.args
		out, code := onTerminal(t, bin, args...)
		if code != ExitOK {
			t.Fatalf("%v on a terminal: exit %d, wrote %q", args, code, out)
		}
		if bytes.Contains([]byte(out), []byte("\x1b]11;?")) || bytes.Contains([]byte(out), []byte("\x1b[6n")) {
			t.Fatalf("%v queried the terminal: %q", args, out)
		}
		if !bytes.Contains([]byte(out), []byte(tc.want)) {
			t.Fatalf("%v on a terminal wrote %q, want %q in it", args, out, tc.want)
		}
	}
}
