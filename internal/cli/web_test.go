package cli

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAuditHTML(t *testing.T) {
	code, out, _ := runKubegap(t, "audit", "--demo", "-o", "html")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (the demo has high findings)", code, ExitFindings)
	}
	for _, want := range []string{"<!doctype html>", "<style>", "kube-system/azure-cns", `href="#case-azure-cni-v2-glibc"`} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	code, _, errOut := runKubegap(t, "audit", "--demo", "-o", "pdf")
	if code != ExitError || !strings.Contains(errOut, "html, json") {
		t.Errorf("-o pdf: exit %d, %q", code, errOut)
	}
}

func TestSiteCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "public")
	code, _, errOut := runKubegap(t, "site", "-o", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"index.html", "cases/index.html", "cases/azure-cni-v2-glibc/index.html", "checks/index.html", "report/index.html", "cases/index.json", "assets/style.css"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("site lacks %s", f)
		}
	}
	code, _, errOut = runKubegap(t, "site")
	if code != ExitError || !strings.Contains(errOut, "-o DIR is required") {
		t.Errorf("site without -o: exit %d, %q", code, errOut)
	}
}

func TestServeBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"kind":"Pod"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "--report", bad},
		{"serve", "--report", filepath.Join(t.TempDir(), "missing.json")},
		{"serve", "--addr", "not-an-address"},
	} {
		code, _, errOut := runKubegap(t, args...)
		if code != ExitError || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.HasPrefix(errOut, "kubegap: ") {
			t.Errorf("%v: exit %d, want one error line; got %q", args, code, errOut)
		}
	}
}

func TestServeListensAndStops(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	app := &App{Getenv: func(string) string { return "" }}
	var errOut strings.Builder
	app.Out, app.ErrOut = &strings.Builder{}, &syncWriter{b: &errOut}
	go func() { done <- Run(ctx, app, []string{"serve", "--addr", addr}) }()
	var resp *http.Response
	for i := 0; i < 100; i++ {
		if resp, err = http.Get("http://" + addr + "/cases"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /cases: %d", resp.StatusCode)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("serve ended with %d", code)
	}
}

// syncWriter lets the serving goroutine and the test share a buffer.
type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
