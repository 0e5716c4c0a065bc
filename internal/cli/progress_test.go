package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProgressFromTheFirstRequest: a live audit says it is contacting the
// server before the first request and that it is discovering APIs before
// discovery, so a server that answers the version and then stalls never
// leaves the user without a word: at a terminal always (in place), off a
// terminal only with --progress, never with -q.
func TestProgressFromTheFirstRequest(t *testing.T) {
	var url string
	// run audits a fresh server that answers the version and never
	// answers discovery, and interrupts it once discovery has begun.
	run := func(terminal bool, flags ...string) string {
		t.Helper()
		var once sync.Once
		discovering := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/version" {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
				return
			}
			once.Do(func() { close(discovering) })
			<-r.Context().Done()
		}))
		defer srv.Close()
		url = srv.URL
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: slow, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: slow, context: {cluster: slow, user: u}}]
current-context: slow
`), 0o600)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errOut bytes.Buffer
		app := &App{Out: &out, ErrOut: &errOut, ErrIsTerminal: terminal, Getenv: func(string) string { return "" }}
		done := make(chan int, 1)
		go func() { done <- Run(ctx, app, append([]string{"audit", "--kubeconfig", kc}, flags...)) }()
		select {
		case <-discovering:
		case <-time.After(20 * time.Second):
			t.Fatal("discovery never started")
		}
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the audit did not end after Ctrl-C")
		}
		return errOut.String()
	}
	got := run(false, "--progress")
	contacting, discoveringAPIs := "contacting "+url, "discovering APIs"
	if !strings.Contains(got, "kubegap: "+contacting+"\n") || !strings.Contains(got, "kubegap: "+discoveringAPIs+"\n") ||
		strings.Index(got, contacting) > strings.Index(got, discoveringAPIs) || strings.Contains(got, "\x1b") {
		t.Errorf("--progress off a terminal: %q", got)
	}
	if got := run(true); !strings.Contains(got, "\r\x1b[Kcontacting "+url) || !strings.Contains(got, "\r\x1b[K"+discoveringAPIs) {
		t.Errorf("at a terminal: %q", got)
	}
	for _, c := range []struct {
		terminal bool
		flags    []string
	}{{false, nil}, {true, []string{"-q"}}} {
		if got := run(c.terminal, c.flags...); strings.Contains(got, "contacting") || strings.Contains(got, "discovering") {
			t.Errorf("terminal %v, flags %v: progress printed: %q", c.terminal, c.flags, got)
		}
	}
	code, out, errOut := runWith(t, fixedApp(nil), "audit", "--demo", "--progress", "-q")
	if code != ExitError || out != "" || errOut != "kubegap: --progress and -q/--quiet cannot be combined\n" {
		t.Errorf("--progress -q: exit %d, %q %q", code, out, errOut)
	}
}
