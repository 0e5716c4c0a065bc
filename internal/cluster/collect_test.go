package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// fakeAPI is an API server over HTTP that serves discovery and paginated
// lists of nodes and pods, with faults injected per request. It tests the
// reader's handling of what goes over the wire; the end-to-end tests run
// the same reader against a real kube-apiserver.
type fakeAPI struct {
	mu     sync.Mutex
	nodes  int
	pods   int
	fault  func(r *http.Request, n int) (status int, body string, handled bool)
	calls  map[string]int
	denied map[string]bool // resource → 403
	// claim, when set, is the remainingItemCount every page reports
	// instead of the true one.
	claim int64
	// nads, when set, makes the API serve k8s.cni.cncf.io/v1 with that
	// many NetworkAttachmentDefinitions (a custom resource).
	nads int
}

// dropMidBody, as a fault's status, sends the start of a body and drops
// the connection.
const dropMidBody = -1

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	key := r.URL.Path
	if c := r.URL.Query().Get("continue"); c != "" {
		key += "?continue"
	}
	f.calls[key]++
	n := f.calls[key]
	f.mu.Unlock()
	if r.Method != http.MethodGet {
		http.Error(w, "read-only test server", http.StatusMethodNotAllowed)
		return
	}
	if f.fault != nil {
		if status, body, ok := f.fault(r, n); ok && status == dropMidBody {
			// Headers and the start of a body, then the connection drops.
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "4096")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":`)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		} else if ok {
			w.Header().Set("Content-Type", "application/json")
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "0")
			}
			w.WriteHeader(status)
			fmt.Fprint(w, body)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/version":
		fmt.Fprint(w, `{"major":"1","minor":"35","gitVersion":"v1.35.4"}`)
	case "/api":
		fmt.Fprint(w, `{"kind":"APIVersions","versions":["v1"]}`)
	case "/apis":
		if f.nads == 0 {
			fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
			return
		}
		fmt.Fprint(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"k8s.cni.cncf.io",
			"versions":[{"groupVersion":"k8s.cni.cncf.io/v1","version":"v1"}]}]}`)
	case "/apis/k8s.cni.cncf.io/v1":
		if f.nads == 0 {
			break
		}
		fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"k8s.cni.cncf.io/v1","resources":[
			{"name":"network-attachment-definitions","namespaced":true,"kind":"NetworkAttachmentDefinition","verbs":["get","list"]}]}`)
		return
	case "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions":
		if f.nads == 0 {
			break
		}
		f.list(w, r, "NetworkAttachmentDefinition", f.nads)
		return
	case "/api/v1":
		fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[
			{"name":"nodes","namespaced":false,"kind":"Node","verbs":["get","list"]},
			{"name":"pods","namespaced":true,"kind":"Pod","verbs":["get","list"]}]}`)
	case "/api/v1/nodes":
		f.list(w, r, "Node", f.nodes)
	case "/api/v1/pods":
		if f.denied["pods"] {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, status(403, "Forbidden", `pods is forbidden: User "ns-viewer" cannot list resource "pods" in API group "" at the cluster scope`))
			return
		}
		f.list(w, r, "Pod", f.pods)
		return
	}
	switch r.URL.Path {
	case "/version", "/api", "/apis", "/api/v1", "/api/v1/nodes":
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, status(404, "NotFound", "the server could not find the requested resource"))
	}
}

// list serves items [continue, continue+limit) of n objects of kind.
func (f *fakeAPI) list(w http.ResponseWriter, r *http.Request, kind string, n int) {
	start := 0
	fmt.Sscanf(r.URL.Query().Get("continue"), "%d", &start)
	limit := n
	fmt.Sscanf(r.URL.Query().Get("limit"), "%d", &limit)
	end := min(start+limit, n)
	var items []map[string]any
	for i := start; i < end; i++ {
		meta := map[string]any{"name": fmt.Sprintf("%s-%04d", strings.ToLower(kind), i)}
		if kind != "Node" {
			meta["namespace"] = "default"
		}
		item := map[string]any{"metadata": meta}
		if kind == "NetworkAttachmentDefinition" {
			item["apiVersion"], item["kind"] = "k8s.cni.cncf.io/v1", kind
		}
		items = append(items, item)
	}
	meta := map[string]any{}
	if end < n {
		meta["continue"] = fmt.Sprint(end)
		meta["remainingItemCount"] = n - end
		if f.claim != 0 {
			meta["remainingItemCount"] = f.claim
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"kind": kind + "List", "apiVersion": "v1",
		"metadata": meta, "items": items})
}

func status(code int, reason, msg string) string {
	b, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"code": code, "reason": reason, "message": msg})
	return string(b)
}

func collect(t *testing.T, f *fakeAPI, cfgMod func(*rest.Config)) (*snapshot.Snapshot, error) {
	t.Helper()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	if cfgMod != nil {
		cfgMod(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Collect(ctx, cfg, []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.NetworkAttachmentDefinitions},
		Options{PageSize: 10, Backoff: time.Millisecond})
}

func TestCollectPagesAndCoverage(t *testing.T) {
	f := &fakeAPI{nodes: 25, pods: 31, denied: map[string]bool{}}
	s, err := collect(t, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 25 || len(s.Pods) != 31 {
		t.Fatalf("nodes=%d pods=%d, want 25 and 31", len(s.Nodes), len(s.Pods))
	}
	if f.calls["/api/v1/pods?continue"] != 3 {
		t.Errorf("pod pages after the first = %d, want 3 (page size 10)", f.calls["/api/v1/pods?continue"])
	}
	if c := s.Status(snapshot.NetworkAttachmentDefinitions); c.Status != snapshot.StatusNotServed {
		t.Errorf("NAD coverage = %+v, want not-served", c)
	}
	if s.Source.ServerVersion != "v1.35.4" {
		t.Errorf("server version = %q", s.Source.ServerVersion)
	}
}

// TestCollectDistrustsRemainingItemCount: the first page's
// remainingItemCount sizes the list, but a garbage count (2^50 pods) from a
// broken or hostile server must not be allocated up front.
func TestCollectDistrustsRemainingItemCount(t *testing.T) {
	f := &fakeAPI{nodes: 3, pods: 31, denied: map[string]bool{}, claim: 1 << 50}
	s, err := collect(t, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 31 || len(s.Nodes) != 3 {
		t.Fatalf("nodes=%d pods=%d, want 3 and 31", len(s.Nodes), len(s.Pods))
	}
}

func TestCollectFaults(t *testing.T) {
	cases := []struct {
		name  string
		api   fakeAPI
		cfg   func(*rest.Config)
		check func(t *testing.T, s *snapshot.Snapshot, err error)
	}{
		{
			name: "429 then success is retried",
			api: fakeAPI{nodes: 5, pods: 5, fault: func(r *http.Request, n int) (int, string, bool) {
				if r.URL.Path == "/api/v1/pods" && n <= 2 {
					return 429, status(429, "TooManyRequests", "too many requests"), true
				}
				return 0, "", false
			}},
			check: func(t *testing.T, s *snapshot.Snapshot, err error) {
				if err != nil || len(s.Pods) != 5 || s.Status(snapshot.Pods).Status != snapshot.StatusRead {
					t.Fatalf("err=%v pods=%d", err, len(s.Pods))
				}
			},
		},
		{
			name: "500 on every try leaves the resource in error, the read goes on",
			api: fakeAPI{nodes: 5, pods: 5, fault: func(r *http.Request, n int) (int, string, bool) {
				if r.URL.Path == "/api/v1/pods" {
					return 500, status(500, "InternalError", "etcdserver: request timed out"), true
				}
				return 0, "", false
			}},
			check: func(t *testing.T, s *snapshot.Snapshot, err error) {
				if err != nil {
					t.Fatal(err)
				}
				c := s.Status(snapshot.Pods)
				if c.Status != snapshot.StatusError || !strings.Contains(c.Message, "etcdserver") {
					t.Errorf("pods coverage = %+v, want error", c)
				}
				if len(s.Nodes) != 5 {
					t.Errorf("nodes = %d, want 5", len(s.Nodes))
				}
			},
		},
		{
			name: "410 on a continue token restarts the list without duplicates",
			api: fakeAPI{nodes: 5, pods: 25, fault: func(r *http.Request, n int) (int, string, bool) {
				if r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("continue") == "20" && n == 1 {
					return 410, status(410, "Expired", "The provided continue parameter is too old"), true
				}
				return 0, "", false
			}},
			check: func(t *testing.T, s *snapshot.Snapshot, err error) {
				if err != nil || len(s.Pods) != 25 {
					t.Fatalf("err=%v pods=%d, want 25 once each", err, len(s.Pods))
				}
			},
		},
		{
			name: "403 is forbidden coverage, not an error",
			api:  fakeAPI{nodes: 5, pods: 5, denied: map[string]bool{"pods": true}},
			check: func(t *testing.T, s *snapshot.Snapshot, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if c := s.Status(snapshot.Pods); c.Status != snapshot.StatusForbidden || !strings.Contains(c.Message, "cannot list") {
					t.Errorf("pods coverage = %+v", c)
				}
			},
		},
		{
			name: "401 (an expired token) ends the read",
			api: fakeAPI{fault: func(*http.Request, int) (int, string, bool) {
				return 401, status(401, "Unauthorized", "Unauthorized"), true
			}},
			check: func(t *testing.T, _ *snapshot.Snapshot, err error) {
				var ue *UnreachableError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), "credentials were refused") {
					t.Fatalf("err = %v", err)
				}
			},
		},
		{
			name: "garbage instead of a list ends the read",
			api: fakeAPI{nodes: 5, pods: 5, fault: func(r *http.Request, n int) (int, string, bool) {
				if r.URL.Path == "/api/v1/nodes" {
					return 200, "<html>proxy login</html>", true
				}
				return 0, "", false
			}},
			check: func(t *testing.T, _ *snapshot.Snapshot, err error) {
				if err == nil || !strings.Contains(err.Error(), "v1/nodes") {
					t.Fatalf("err = %v, want an error naming v1/nodes", err)
				}
			},
		},
		{
			name: "a server that does not answer in time leaves the resource in error",
			api: fakeAPI{nodes: 5, pods: 5, fault: func(r *http.Request, n int) (int, string, bool) {
				if r.URL.Path == "/api/v1/pods" {
					time.Sleep(300 * time.Millisecond)
				}
				return 0, "", false
			}},
			cfg: func(c *rest.Config) { c.Timeout = 100 * time.Millisecond },
			check: func(t *testing.T, s *snapshot.Snapshot, err error) {
				if err != nil {
					t.Fatal(err)
				}
				if c := s.Status(snapshot.Pods); c.Status != snapshot.StatusError {
					t.Errorf("pods coverage = %+v, want error", c)
				}
			},
		},
	}
	for i := range cases {
		tc := &cases[i]
		t.Run(tc.name, func(t *testing.T) {
			s, err := collect(t, &tc.api, tc.cfg)
			tc.check(t, s, err)
		})
	}
}

func TestCollectUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := srv.URL
	srv.Close() // nothing listens there now
	_, err := Collect(context.Background(), &rest.Config{Host: host, Timeout: 2 * time.Second},
		[]snapshot.Resource{snapshot.Nodes}, Options{})
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), host) {
		t.Fatalf("err = %v, want UnreachableError naming %s", err, host)
	}
}
