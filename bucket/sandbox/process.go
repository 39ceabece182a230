package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcessOptions configures StartProcess.
type ProcessOptions struct {
	// Dir is the working directory of the process ("" keeps ours).
	Dir string
	// LogPath is the file that receives the process's stdout and stderr.
	// It is appended to, so the output of earlier runs stays. It defaults
	// to <Dir>/<base name of the binary>.log, and one of the two is required.
	LogPath string
	// Env is the environment; nil inherits ours.
	Env []string
}

// Process is a child process whose output goes to a log file. On Linux it is
// started with a parent-death signal (SIGKILL), so it does not outlive us.
type Process struct {
	cmd     *exec.Cmd
	name    string
	logPath string

	done    chan struct{}
	waitErr error // set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// StartProcess starts name with args, its stdout and stderr appended to a log
// file (see ProcessOptions.LogPath). The process runs until it exits, Stop or
// Kill is called, or this process dies.
func StartProcess(name string, args []string, opts ProcessOptions) (*Process, error) {
	logPath := opts.LogPath
	if logPath == "" {
		if opts.Dir == "" {
			return nil, errors.New("sandbox: StartProcess needs a Dir or a LogPath")
		}
		logPath = filepath.Join(opts.Dir, filepath.Base(name)+".log")
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sandbox: open log: %w", err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	configureSysProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("sandbox: start %s: %w", name, err)
	}
	p := &Process{cmd: cmd, name: name, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath returns the file that receives the process's output.
func (p *Process) LogPath() string { return p.logPath }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitErr returns the error of the process's exit (nil for status 0), or
// nil while it runs.
func (p *Process) ExitErr() error {
	if !p.Exited() {
		return nil
	}
	return p.waitErr
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then sends
// SIGKILL and waits for it to be reaped. It is idempotent and safe for
// concurrent use; a process that exited by itself is not an error.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		if p.Exited() {
			return
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			// No SIGTERM on this OS, or the process is gone: kill outright.
			grace = 0
		}
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
		p.stopErr = p.Kill()
	})
	return p.stopErr
}

// Kill sends SIGKILL and waits until the process is reaped. Killing a process
// that already exited is not an error.
func (p *Process) Kill() error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sandbox: kill %s (pid %d): %w", p.name, p.Pid(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("sandbox: %s (pid %d) still not reaped 10s after SIGKILL", p.name, p.Pid())
	}
}

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	return tailFile(p.logPath, n)
}

// tailFile returns the last n lines of the file at path, reading at most its
// last 64 KiB.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const maxRead = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > maxRead {
		if _, err := f.Seek(-maxRead, io.SeekEnd); err != nil {
			return fmt.Sprintf("(log unreadable: %v)", err)
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
