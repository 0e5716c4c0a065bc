package mcp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHostileNamespaceRefused: namespace is a path segment of every
// namespaced LIST of a live audit; one that is not a namespace name
// ("../nodes/node-a/proxy" reaches a kubelet through the API server) is a
// tool error before any request is sent, for files and demo too.
func TestHostileNamespaceRefused(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '"+srv.URL+
		"'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: prod, context: {cluster: c, user: u}}]\ncurrent-context: prod\n"), 0o600)
	cs := connect(t, Options{Kubeconfig: kc})
	for _, args := range []map[string]any{
		{"namespace": "../nodes/node-a/proxy"},
		{"namespace": "kube-system/services/http:kube-dns:53/proxy"},
		{"namespace": "..", "context": "prod"},
		{"namespace": "a/b", "demo": true},
	} {
		msg := callErr(t, cs, ToolAudit, args)
		if !strings.Contains(msg, "is not a namespace name") {
			t.Errorf("%v: error %q, want a refusal of the namespace", args, msg)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent to the API server", n)
	}
}
