package testcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one control-plane binary running in its own process group,
// its output captured to a log file in the cluster directory.
type process struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // from Wait, valid once done is closed
}

// startProcess runs bin with args, output to dir/name.log. The child is
// killed when the test binary dies for any reason (see sysProcAttr).
func startProcess(dir, name, bin string, args []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Dir = dir
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	p := &process{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group and SIGKILL after grace. It
// returns an error only if the process outlived SIGKILL.
func (p *process) stop(grace time.Duration) error {
	if ok, _ := p.exited(); ok {
		return nil
	}
	terminateGroup(p.cmd.Process.Pid)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	killGroup(p.cmd.Process.Pid)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// tail returns the last n lines of the process's log.
func (p *process) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.log, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString("    | ")
		sb.Write(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// signal sends sig to the process's group.
func (p *process) signal(sig syscall.Signal) error {
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

// waitStopped waits until the process is in the stopped state ("T" in
// /proc/PID/stat), where it is after SIGSTOP has been delivered. Where
// /proc is missing (not Linux) it returns at once.
func (p *process) waitStopped(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	path := fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)
	for {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil // no procfs: nothing to wait on
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(raw, ')'); i >= 0 && i+2 < len(raw) && (raw[i+2] == 'T' || raw[i+2] == 't') {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not stopped after %s", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
