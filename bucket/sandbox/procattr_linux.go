//go:build linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// configureSysProcAttr asks the kernel to SIGKILL the child when the thread
// that started it dies. The Go runtime never retires an OS thread unless a
// goroutine exits while locked to it (runtime.LockOSThread), which nothing on
// this path does, so in practice the child dies with this process, also when
// it is killed with SIGKILL and cleanups cannot run.
func configureSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
