package floor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// pagedAPI serves n pods and 3 nodes in pages of ?limit, JSON only, and
// records the field selectors it was sent.
type pagedAPI struct {
	pods      int
	mu        sync.Mutex
	selectors []string
}

func (a *pagedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.selectors = append(a.selectors, r.URL.Query().Get("fieldSelector"))
	a.mu.Unlock()
	n, kind := 0, ""
	switch r.URL.Path {
	case "/api/v1/pods":
		n, kind = a.pods, "Pod"
	case "/api/v1/nodes":
		n, kind = 3, "Node"
	case "/api/v1/events":
		n, kind = 0, "Event"
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"reason":"NotFound"}`)
		return
	}
	start, limit := 0, n
	fmt.Sscanf(r.URL.Query().Get("continue"), "%d", &start)
	fmt.Sscanf(r.URL.Query().Get("limit"), "%d", &limit)
	end := min(start+limit, n)
	items := []map[string]any{}
	for i := start; i < end; i++ {
		items = append(items, map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", strings.ToLower(kind), i), "namespace": "ns"}})
	}
	cont := ""
	if end < n {
		cont = fmt.Sprint(end)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"kind": kind + "List", "apiVersion": "v1", "metadata": map[string]any{"continue": cont}, "items": items})
}

func TestListReadsEveryPage(t *testing.T) {
	api := &pagedAPI{pods: 1234}
	srv := httptest.NewServer(api)
	defer srv.Close()
	res := []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.Events, snapshot.NetworkAttachmentDefinitions}
	counts, err := List(context.Background(), &rest.Config{Host: srv.URL}, res, Options{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]int{ // objects, pages, not served
		"v1/nodes": {3, 1, 0}, "v1/pods": {1234, 13, 0}, "v1/events": {0, 1, 0},
		"k8s.cni.cncf.io/v1/network-attachment-definitions": {0, 0, 1},
	}
	for _, c := range counts {
		w := want[c.Resource.String()]
		ns := 0
		if c.NotServed {
			ns = 1
		}
		if c.Objects != w[0] || c.Pages != w[1] || ns != w[2] {
			t.Errorf("%s: %d objects in %d pages (not served %v), want %v", c.Resource, c.Objects, c.Pages, c.NotServed, w)
		}
	}
	if !strings.Contains(strings.Join(api.selectors, ","), "type=Warning") {
		t.Errorf("events were not listed with kubegap's field selector: %q", api.selectors)
	}
}

func TestListFailsOnServerErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":403,"reason":"Forbidden","message":"no"}`)
	}))
	defer srv.Close()
	if _, err := List(context.Background(), &rest.Config{Host: srv.URL}, []snapshot.Resource{snapshot.Pods}, Options{}); err == nil {
		t.Fatal("a forbidden list gave no error: the floor must be a full read")
	}
}
