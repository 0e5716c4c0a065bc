package testcluster

import (
	"errors"
	"syscall"
)

// sysProcAttr puts the child in its own process group, so that stop reaches
// anything it forks, and has the kernel SIGKILL it when the test binary
// dies: a panic, a go test -timeout or a kill leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func terminateGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGTERM) }

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// processAlive reports whether pid exists (EPERM means it does, owned by
// another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
