package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// liveAPI is a minimal API server over HTTP for the CLI's kubeconfig and
// error-line tests: discovery for the core group and empty lists, with the
// first LIST of pods cut off mid-body when dropPods is set. The reader
// itself is tested in internal/cluster and against the real API server in
// test/e2e.
type liveAPI struct {
	mu       sync.Mutex
	requests []string
	dropPods bool
	dropped  bool
}

func (a *liveAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests = append(a.requests, r.URL.Path)
	drop := a.dropPods && !a.dropped && r.URL.Path == "/api/v1/pods"
	if drop {
		a.dropped = true
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch p := r.URL.Path; {
	case drop:
		w.Header().Set("Content-Length", "4096")
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case p == "/version":
		fmt.Fprint(w, `{"major":"1","minor":"35","gitVersion":"v1.35.4"}`)
	case p == "/api":
		fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
	case p == "/apis":
		fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
	case p == "/api/v1":
		fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[
			{"name":"nodes","namespaced":false,"kind":"Node","verbs":["get","list"]},
			{"name":"pods","namespaced":true,"kind":"Pod","verbs":["get","list"]}]}`)
	case p == "/api/v1/nodes", p == "/api/v1/pods":
		kind := map[string]string{"/api/v1/nodes": "NodeList", "/api/v1/pods": "PodList"}[p]
		fmt.Fprintf(w, `{"kind":%q,"apiVersion":"v1","metadata":{},"items":[]}`, kind)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
}

func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+server+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: test, context: {cluster: c, user: u}}]
current-context: test
`), 0o600)
	return kc
}

func wantOneErrorLine(t *testing.T, code int, out, errOut, want string) {
	t.Helper()
	if code != ExitError {
		t.Errorf("exit %d, want 2", code)
	}
	if out != "" {
		t.Errorf("stdout not empty: %q", out)
	}
	if strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, want) {
		t.Errorf("stderr = %q, want one line containing %q", errOut, want)
	}
}

// TestHostileNamespaceRefused: -n is a path segment of every namespaced
// LIST; one that is not a namespace name is refused before any request.
func TestHostileNamespaceRefused(t *testing.T) {
	api := &liveAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kc := kubeconfigFor(t, srv.URL)
	for _, args := range [][]string{
		{"audit", "--kubeconfig", kc, "-q", "-n", "../nodes/node-a/proxy"},
		{"audit", "--kubeconfig", kc, "-q", "-n", "kube-system/services/http:kube-dns:53/proxy"},
		{"audit", "--kubeconfig", kc, "-q", "--namespace", "../../x"},
		{"snapshot", "--kubeconfig", kc, "-q", "-n", "..", "-o", filepath.Join(t.TempDir(), "s.json")},
		{"audit", "--demo", "-n", "a/b"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runKubegap(t, args...)
			wantOneErrorLine(t, code, out, errOut, "-n/--namespace")
			if !strings.Contains(errOut, "is not a namespace name") {
				t.Errorf("stderr = %q", errOut)
			}
		})
	}
	if len(api.requests) != 0 {
		t.Errorf("requests sent: %v", api.requests)
	}
}

// TestNoClusterConfigured: without a kubeconfig naming a cluster (and not in
// a pod), kubegap says so and what it can audit instead; it never falls
// back to http://localhost:8080 as kubectl's loader does.
func TestNoClusterConfigured(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	noClusters := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(noClusters, []byte(`apiVersion: v1
kind: Config
users: [{name: u, user: {token: t}}]
contexts: [{name: lonely, context: {user: u}}]
current-context: lonely
`), 0o600)
	noCurrent := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(noCurrent, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: prod, context: {cluster: c, user: u}}]
`), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no current context", []string{"audit", "--kubeconfig", noCurrent, "-q"}, `no current context; its contexts are "prod"`},
		{"no kubeconfig at all", []string{"audit", "-q"}, "no kubeconfig found"},
		{"a kubeconfig with no clusters", []string{"audit", "--kubeconfig", noClusters, "-q"}, `context "lonely" names no cluster`},
		{"snapshot", []string{"snapshot", "--kubeconfig", noClusters, "-q", "-o", filepath.Join(home, "s.json")}, "kubegap audit --demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runKubegap(t, tc.args...)
			wantOneErrorLine(t, code, out, errOut, "no cluster is configured")
			if !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--demo") {
				t.Errorf("stderr = %q, want it to contain %q and name --demo", errOut, tc.want)
			}
		})
	}
}

// TestDroppedBodyNoKlogLine: a connection dropped mid-body is retried, and
// client-go's klog line about it never reaches stderr beside kubegap's own.
func TestDroppedBodyNoKlogLine(t *testing.T) {
	api := &liveAPI{dropPods: true}
	srv := httptest.NewServer(api)
	defer srv.Close()
	kc := kubeconfigFor(t, srv.URL)

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	captured := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		captured <- string(b)
	}()
	code, out, errOut := runKubegap(t, "audit", "--kubeconfig", kc, "-q", "-o", "json", "--checks", "pdb-blocks-drain")
	os.Stderr = stderr
	w.Close()
	procErr := <-captured
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !api.dropped {
		t.Fatal("the pods LIST was never dropped: the test tested nothing")
	}
	var rep struct {
		Coverage []struct{ Resource, Status string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	pods := ""
	for _, c := range rep.Coverage {
		if c.Resource == "v1/pods" {
			pods = c.Status
		}
	}
	if pods != "read" {
		t.Errorf("pods coverage %q after the retry, want read", pods)
	}
	if procErr != "" || errOut != "" {
		t.Errorf("stderr = %q, process stderr = %q; want nothing", errOut, procErr)
	}
}
