package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestInterruptDuringStalledDiscovery: Ctrl-C (a cancelled context, as
// Main's signal.NotifyContext makes it) while the API server never
// answers discovery ends the audit with exit 130. The wait for it is
// bounded, not a timed assertion.
func TestInterruptDuringStalledDiscovery(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: stalled, cluster: {server: "`+srv.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: stalled, context: {cluster: stalled, user: u}}]
current-context: stalled
`), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, &App{Out: &out, ErrOut: &errOut}, []string{"audit", "--kubeconfig", kc}) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want 130; stderr %q", code, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the audit still waits on the stalled discovery after Ctrl-C")
	}
}
