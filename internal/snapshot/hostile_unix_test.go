//go:build unix

package snapshot

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

// TestRefusesWhatIsNotARegularFile: --from and MCP files read regular
// files and directories only; a pipe, a device or the process's own
// standard input ends with one line naming it, before anything is read.
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "pipe.yaml"))

	inDir := filepath.Join(dir, "dump")
	os.Mkdir(inDir, 0o755)
	write(t, inDir, "nodes.yaml", []byte(nodeYAML))
	mkfifo(t, filepath.Join(inDir, "pods.yaml"))

	linkDir := filepath.Join(dir, "linked")
	os.Mkdir(linkDir, 0o755)
	write(t, linkDir, "nodes.yaml", []byte(nodeYAML))
	if err := os.Symlink("/dev/zero", filepath.Join(linkDir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}

	sockDir := filepath.Join(dir, "sock")
	os.Mkdir(sockDir, 0o755)
	sock := filepath.Join(sockDir, "s.json")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
	} else {
		sock = ""
	}

	cases := []struct {
		name, path, want string
	}{
		{"named pipe", fifo, "pipe.yaml: is a named pipe (FIFO)"},
		{"named pipe in a directory", inDir, "pods.yaml: is a named pipe (FIFO)"},
		{"link to /dev/zero in a directory", linkDir, "zero.yaml: is a character device"},
		{"/dev/zero", "/dev/zero", "/dev/zero: is a character device"},
		{"/dev/urandom", "/dev/urandom", "/dev/urandom: is a character device"},
		// Whatever standard input is here (a terminal, /dev/null, a pipe),
		// it is refused as kubegap's own.
		{"/dev/stdin", "/dev/stdin", "/dev/stdin: is kubegap's own standard input"},
	}
	if sock != "" {
		cases = append(cases, struct{ name, path, want string }{"socket", sock, "s.json: is a socket"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.path); err != nil {
				t.Skip(err)
			}
			err := loadOrHang(t, tc.path)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an *InputError", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line containing %q", msg, tc.want)
			}
		})
	}
}

// TestOpenInputRefusesAPipeSwappedIn: a file replaced by a named pipe
// after the stat is still not opened for a blocking read.
func TestOpenInputRefusesAPipeSwappedIn(t *testing.T) {
	p := mkfifo(t, filepath.Join(t.TempDir(), "p.yaml"))
	done := make(chan error, 1)
	go func() {
		f, err := openInput(p)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("openInput(fifo) = %v, want a named-pipe error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("openInput blocked on a named pipe")
	}
}
