//go:build !linux

package testcluster

import (
	"os"
	"syscall"
)

// sysProcAttr has no parent-death signal off Linux; the test bed is only
// supported on Linux, where CI runs it.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func terminateGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// processAlive is conservative off Linux: directories are never swept.
func processAlive(int) bool { return true }
