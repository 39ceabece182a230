//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bucketctl/bucketctl/tui/termtest"
)

const cols, rows = 100, 30

func main() {
	bin := flag.String("bin", "bin/bucketctl", "the bucketctl binary to draw")
	out := flag.String("out", "scripts/screenshots", "directory for the SVG files")
	flag.Parse()
	if err := run(*bin, *out); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(bin, out string) error {
	home, err := os.MkdirTemp("", "bucketctl-screenshots")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home,
		"TERM=xterm-256color", "COLORTERM=truecolor", "LANG=C.UTF-8"}

	demo, err := start(bin, env, shots[0].args...)
	if err != nil {
		return err
	}
	defer demo.stop()
	if err := demo.waitFor(shots[0].wait, 60*time.Second); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	addr := regexp.MustCompile(`127\.0\.0\.1:\d+`).FindString(demo.text(false))
	if addr == "" {
		return errors.New("demo: no sandbox address on its screen")
	}
	time.Sleep(shots[0].after) // traffic fills the rows in
	if err := write(out, shots[0], demo.cells(false)); err != nil {
		return err
	}
	for _, s := range shots[1:] {
		if s.final {
			continue // taken with the live one before it
		}
		p, err := start(bin, env, append([]string{"--url", addr}, s.args...)...)
		if err != nil {
			return err
		}
		if err := p.waitFor(s.wait, 20*time.Second); err != nil {
			p.stop()
			return fmt.Errorf("%s: %w", s.title, err)
		}
		time.Sleep(s.after)
		if err := write(out, s, p.cells(false)); err != nil {
			p.stop()
			return err
		}
		next := shotAfter(s)
		if next == nil {
			p.send("q")
			p.stop()
			continue
		}
		if err := p.wait(30 * time.Second); err != nil {
			return fmt.Errorf("%s: %w", s.title, err)
		}
		if err := write(out, *next, trimBlank(p.cells(true))); err != nil {
			return err
		}
	}
	demo.send("q")
	return demo.wait(20 * time.Second)
}

// shotAfter is the picture of what s's command leaves once it ends, if there is one.
func shotAfter(s shot) *shot {
	for i, t := range shots {
		if t.final && t.title == s.title && i > 0 && shots[i-1].file == s.file {
			return &shots[i]
		}
	}
	return nil
}

// trimBlank drops the blank rows a cleared live view left above what was printed.
func trimBlank(r [][]termtest.Cell) [][]termtest.Cell {
	for len(r) > 0 && len(r[0]) == 0 {
		r = r[1:]
	}
	return r
}

func write(dir string, s shot, cells [][]termtest.Cell) error {
	fmt.Fprintf(os.Stderr, "screenshots: %s (%d rows)\n", s.file, len(cells))
	return os.WriteFile(filepath.Join(dir, s.file), []byte(svg(s.title, cells, cols)), 0o644)
}

// session is bucketctl running on a pseudo-terminal, replayed into a termtest.Terminal.
type session struct {
	cmd  *exec.Cmd
	ptmx *os.File
	mu   sync.Mutex
	term *termtest.Terminal
	done chan error
}

func start(bin string, env []string, args ...string) (*session, error) {
	ptmx, tty, err := openPTY()
	if err != nil {
		return nil, err
	}
	defer tty.Close()
	if err := unix.IoctlSetWinsize(int(ptmx.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		return nil, err
	}
	s := &session{ptmx: ptmx, term: termtest.New(cols, rows), done: make(chan error, 1)}
	s.term.ONLCR = true
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = env
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, tty, tty
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := s.cmd.Start(); err != nil {
		ptmx.Close()
		return nil, err
	}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			_, _ = s.term.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
	return s, nil
}

func (s *session) text(all bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if all {
		return s.term.String()
	}
	var b strings.Builder
	for _, row := range s.term.Cells(false) {
		for _, c := range row {
			b.WriteRune(c.R)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *session) cells(all bool) [][]termtest.Cell {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.Cells(all)
}

func (s *session) waitFor(text string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for !strings.Contains(s.text(false), text) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%q never showed in %s; the screen:\n%s", text, limit, s.text(true))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

func (s *session) send(keys string) { _, _ = io.WriteString(s.ptmx, keys) }

func (s *session) wait(limit time.Duration) error {
	select {
	case err := <-s.done:
		time.Sleep(200 * time.Millisecond) // the last output drains from the terminal
		return err
	case <-time.After(limit):
		s.stop()
		return fmt.Errorf("did not end within %s", limit)
	}
}

func (s *session) stop() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
		}
	}
	_ = s.ptmx.Close()
}

// openPTY opens a pseudo-terminal pair: what the child writes to tty is read from ptmx.
func openPTY() (ptmx, tty *os.File, err error) {
	ptmx, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(ptmx.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	return ptmx, tty, nil
}
