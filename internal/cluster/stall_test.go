package cluster

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestCancelDuringStalledDiscovery: a server that never answers the
// version request does not hold Collect past a cancelled context (Ctrl-C
// cancels it in the CLI). The wait is bounded, not timed: the test fails
// only if Collect has not returned long after the cancel.
func TestCancelDuringStalledDiscovery(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Collect(ctx, &rest.Config{Host: srv.URL}, []snapshot.Resource{snapshot.Pods}, Options{})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Collect after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Collect still waits on the stalled discovery after its context was cancelled")
	}
}
