//go:build unix

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAuditFilesRefusesWhatIsNotAFile: audit's files refuse a FIFO (alone
// or in a directory), /dev/zero, /dev/urandom, /dev/stdin (the server's
// own transport on stdio) and a 5 GB sparse file with one line in a tool
// error, and the server answers the next call. Before, a FIFO never
// returned and /dev/zero cost gigabytes.
func TestAuditFilesRefusesWhatIsNotAFile(t *testing.T) {
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
	cases := []struct{ name, file, want string }{
		{"fifo", fifo, "pipe.yaml: is a named pipe"},
		{"fifo in a directory", dump, "pods.yaml: is a named pipe"},
		{"/dev/zero", "/dev/zero", "is a character device"},
		{"/dev/urandom", "/dev/urandom", "is a character device"},
		{"/dev/stdin", "/dev/stdin", "standard input"},
	}
	if !testing.Short() {
		sparse := filepath.Join(dir, "sparse.yaml")
		if f, err := os.Create(sparse); err == nil {
			if f.Truncate(5<<30) == nil {
				cases = append(cases, struct{ name, file, want string }{"5 GB sparse file", sparse, "a line longer than 16 MiB"})
			}
			f.Close()
		}
	}
	cs := connect(t, Options{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.file); err != nil {
				t.Skip(err)
			}
			done := make(chan string, 1)
			go func() { done <- callErr(t, cs, ToolAudit, map[string]any{"files": []string{tc.file}}) }()
			select {
			case msg := <-done:
				if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
					t.Errorf("error %q, want one line with %q", msg, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("audit of the file did not return")
			}
		})
	}
	var list ListChecksOutput
	call(t, cs, ToolListChecks, map[string]any{}, &list)
	if len(list.Checks) == 0 {
		t.Error("list_checks empty after the refused files")
	}
}
