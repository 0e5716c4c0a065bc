//go:build unix

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runOrHang is runKubegap that fails the test if kubegap has not exited
// within a minute (a hang detector: before the stat checks, --from FIFO
// blocked for ever).
func runOrHang(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		c, o, e := runKubegap(t, args...)
		done <- result{c, o, e}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(time.Minute):
		t.Fatalf("kubegap %v did not exit", args)
		return 0, "", ""
	}
}

// TestFromRefusesWhatIsNotAFile: --from FIFO, a FIFO in a directory,
// /dev/zero, /dev/stdin and a 5 GB sparse file each end with exit 2, one
// line on stderr, and nothing on stdout or in --output-file.
func TestFromRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	dump := filepath.Join(dir, "dump")
	os.Mkdir(dump, 0o755)
	os.WriteFile(filepath.Join(dump, "nodes.yaml"), []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dump, "pods.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse.yaml")
	if f, err := os.Create(sparse); err == nil {
		err = f.Truncate(5 << 30)
		f.Close()
		if err != nil {
			sparse = ""
		}
	}
	report := filepath.Join(dir, "report.json")
	cases := []struct{ name, from, want string }{
		{"fifo", fifo, "pipe.yaml: is a named pipe"},
		{"fifo in a directory", dump, "pods.yaml: is a named pipe"},
		{"/dev/zero", "/dev/zero", "/dev/zero: is a character device"},
		{"/dev/urandom", "/dev/urandom", "/dev/urandom: is a character device"},
		{"/dev/stdin", "/dev/stdin", "/dev/stdin: is kubegap's own standard input"},
	}
	if sparse != "" && !testing.Short() {
		cases = append(cases, struct{ name, from, want string }{"5 GB sparse file", sparse, "a line longer than 16 MiB"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.from); err != nil {
				t.Skip(err)
			}
			code, out, errOut := runOrHang(t, "audit", "--from", tc.from, "-o", "json", "--output-file", report)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "kubegap: ") || !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q, want one line with %q", errOut, tc.want)
			}
			if _, err := os.Stat(report); !os.IsNotExist(err) {
				t.Errorf("--output-file written: %v", err)
			}
		})
	}
}

// TestFromStdinInterrupted: Ctrl-C (the context ending) while --from -
// waits on a standard input that never ends exits 130 at once, as a live
// audit does; before, the blocked read kept the process alive.
func TestFromStdinInterrupted(t *testing.T) {
	pr, pw := io.Pipe() // nothing is ever written
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errOut bytes.Buffer
	app := fixedApp(nil)
	app.In, app.Out, app.ErrOut = pr, &out, &errOut
	done := make(chan int, 1)
	go func() { done <- Run(ctx, app, []string{"audit", "--from", "-"}) }()
	select {
	case code := <-done:
		if code != ExitInterrupted || strings.TrimSpace(errOut.String()) != "kubegap: interrupted" || out.Len() != 0 {
			t.Errorf("exit %d, stderr %q, stdout %q", code, errOut.String(), out.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("an interrupted --from - did not exit")
	}
}
