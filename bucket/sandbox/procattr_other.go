//go:build !linux

package sandbox

import "os/exec"

// configureSysProcAttr is a no-op where the kernel has no parent-death
// signal: children are still stopped by Close and the test cleanups.
func configureSysProcAttr(cmd *exec.Cmd) {}
