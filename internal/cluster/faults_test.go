package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// The reproducers of issue 28's reader defects, each against the HTTP
// fake API of collect_test.go.

// TestCollect404AfterDiscoveryIsAnError: a resource (or group/version) the
// server announced and that then answers 404 is a failed read, never
// "not served, complete, none".
func TestCollect404AfterDiscoveryIsAnError(t *testing.T) {
	notFound := func(paths ...string) func(*http.Request, int) (int, string, bool) {
		return func(r *http.Request, _ int) (int, string, bool) {
			for _, p := range paths {
				if r.URL.Path == p {
					return 404, status(404, "NotFound", "the server could not find the requested resource"), true
				}
			}
			return 0, "", false
		}
	}
	cases := []struct {
		name  string
		fault func(*http.Request, int) (int, string, bool)
		// errors are the resources that must be in error; the others
		// must be read.
		errors []snapshot.Resource
	}{
		{"LIST of pods", notFound("/api/v1/pods"), []snapshot.Resource{snapshot.Pods}},
		{"LIST of a custom resource", notFound("/apis/k8s.cni.cncf.io/v1/network-attachment-definitions"),
			[]snapshot.Resource{snapshot.NetworkAttachmentDefinitions}},
		// client-go's discovery client answers a 404 on /api/v1 with an
		// empty list and no error.
		{"core discovery document", notFound("/api/v1"), []snapshot.Resource{snapshot.Nodes, snapshot.Pods}},
		{"a group's discovery document", notFound("/apis/k8s.cni.cncf.io/v1"),
			[]snapshot.Resource{snapshot.NetworkAttachmentDefinitions}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAPI{nodes: 3, pods: 4, nads: 2, fault: tc.fault}
			s, err := collect(t, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.NetworkAttachmentDefinitions} {
				c := s.Status(res)
				want := snapshot.StatusRead
				for _, e := range tc.errors {
					if e == res {
						want = snapshot.StatusError
					}
				}
				if c.Status != want {
					t.Errorf("%s coverage = %+v, want %s", res, c, want)
				}
				if want == snapshot.StatusError && (c.Complete || !strings.Contains(c.Message, "404")) {
					t.Errorf("%s coverage = %+v, want incomplete, naming the 404", res, c)
				}
			}
		})
	}
}

// TestCollectNotAnnouncedIsNotServed: a group/version the group list does
// not name is not served, complete and empty, and is not even asked for.
func TestCollectNotAnnouncedIsNotServed(t *testing.T) {
	f := &fakeAPI{nodes: 3, pods: 4}
	s, err := collect(t, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(snapshot.NetworkAttachmentDefinitions); c.Status != snapshot.StatusNotServed || !c.Complete {
		t.Errorf("NAD coverage = %+v, want not-served and complete", c)
	}
	for p := range f.calls {
		if strings.Contains(p, "k8s.cni.cncf.io") {
			t.Errorf("asked %s of a group the server does not list", p)
		}
	}
}

// TestCollectRefusesHostileNamespace: a namespace that is not a DNS label
// is refused before anything is sent; it is a path segment of every
// namespaced LIST.
func TestCollectRefusesHostileNamespace(t *testing.T) {
	for _, ns := range []string{"../nodes/node-a/proxy", "kube-system/services/http:kube-dns:53/proxy",
		"..", "../../x", "a:b", "Default", "kube-system?x=y", "a%2fb", strings.Repeat("a", 64), strings.Repeat("x", 1<<20)} {
		t.Run(ns[:min(len(ns), 40)], func(t *testing.T) {
			f := &fakeAPI{nodes: 3, pods: 4, calls: map[string]int{}}
			_, err := collectIn(t, f, ns)
			if err == nil || !strings.Contains(err.Error(), "is not a namespace name") {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long, want one short line", len(err.Error()))
			}
			if len(f.calls) != 0 {
				t.Errorf("requests sent before refusing: %v", f.calls)
			}
		})
	}
	f := &fakeAPI{nodes: 3, pods: 4, calls: map[string]int{}}
	if _, err := collectIn(t, f, "kube-system"); err != nil {
		t.Fatalf("a valid namespace: %v", err)
	}
	if f.calls["/api/v1/namespaces/kube-system/pods"] != 1 {
		t.Errorf("calls = %v, want one LIST of pods in kube-system", f.calls)
	}
}

func TestListPathRefusesHostileNamespace(t *testing.T) {
	if p, err := listPath(snapshot.Pods, "../nodes/x/proxy"); err == nil {
		t.Fatalf("listPath = %q, want an error", p)
	}
	if p, err := listPath(snapshot.Pods, "kube-system"); err != nil || p != "/api/v1/namespaces/kube-system/pods" {
		t.Fatalf("listPath = %q, %v", p, err)
	}
}

func collectIn(t *testing.T, f *fakeAPI, ns string) (*snapshot.Snapshot, error) {
	t.Helper()
	srv := httptestServer(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Collect(ctx, &rest.Config{Host: srv}, []snapshot.Resource{snapshot.Nodes, snapshot.Pods},
		Options{PageSize: 10, Backoff: time.Millisecond, Namespace: ns})
}

// TestCollectStopsEndlessLists: a continue token the server already sent,
// or pages far beyond the remainingItemCount it announced, stop the list
// and leave that resource in error; the other resources are read.
func TestCollectStopsEndlessLists(t *testing.T) {
	cases := []struct {
		name     string
		path     string
		res      snapshot.Resource
		page     func(n int) string
		maxPages int
	}{
		{"typed, the same token again", "/api/v1/pods", snapshot.Pods,
			func(int) string {
				return `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"again"},"items":[]}`
			}, 3},
		{"typed, tokens cycling", "/api/v1/pods", snapshot.Pods,
			func(n int) string {
				return fmt.Sprintf(`{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"t%d"},"items":[]}`, n%3)
			}, 5},
		{"typed, fresh tokens beyond the announced count", "/api/v1/pods", snapshot.Pods,
			func(n int) string {
				return fmt.Sprintf(`{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"t%d","remainingItemCount":5},"items":[]}`, n)
			}, 13},
		{"custom, the same token again", "/apis/k8s.cni.cncf.io/v1/network-attachment-definitions", snapshot.NetworkAttachmentDefinitions,
			func(int) string {
				return `{"kind":"NetworkAttachmentDefinitionList","apiVersion":"k8s.cni.cncf.io/v1","metadata":{"continue":"again"},"items":[]}`
			}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var pages int
			f := &fakeAPI{nodes: 3, pods: 4, nads: 2, fault: func(r *http.Request, _ int) (int, string, bool) {
				if r.URL.Path != tc.path {
					return 0, "", false
				}
				pages++
				return 200, tc.page(pages), true
			}}
			s, err := collect(t, f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c := s.Status(tc.res); c.Status != snapshot.StatusError || c.Complete || !strings.Contains(c.Message, "stopped") {
				t.Errorf("%s coverage = %+v, want an error saying the list stopped", tc.res, c)
			}
			if pages > tc.maxPages {
				t.Errorf("%d pages asked, want at most %d", pages, tc.maxPages)
			}
			if len(s.Nodes) != 3 {
				t.Errorf("nodes = %d, want 3", len(s.Nodes))
			}
		})
	}
}

// TestCollectRetriesDroppedBodies: a connection dropped in the middle of a
// body is transient: retried, and if it keeps dropping, that resource is
// in error while the rest of the read goes on.
func TestCollectRetriesDroppedBodies(t *testing.T) {
	drop := func(times int) func(*http.Request, int) (int, string, bool) {
		return func(r *http.Request, n int) (int, string, bool) {
			if r.URL.Path == "/api/v1/pods" && n <= times {
				return dropMidBody, "", true
			}
			return 0, "", false
		}
	}
	t.Run("once", func(t *testing.T) {
		f := &fakeAPI{nodes: 3, pods: 4, fault: drop(1)}
		s, err := collect(t, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(snapshot.Pods); c.Status != snapshot.StatusRead || len(s.Pods) != 4 {
			t.Errorf("pods coverage = %+v, %d pods; want read, 4", c, len(s.Pods))
		}
	})
	t.Run("always", func(t *testing.T) {
		f := &fakeAPI{nodes: 3, pods: 4, fault: drop(1 << 30)}
		s, err := collect(t, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(snapshot.Pods); c.Status != snapshot.StatusError || c.Complete {
			t.Errorf("pods coverage = %+v, want error", c)
		}
		if f.calls["/api/v1/pods"] != 4 {
			t.Errorf("pods asked %d times, want 4 (Options.Attempts)", f.calls["/api/v1/pods"])
		}
		if len(s.Nodes) != 3 {
			t.Errorf("nodes = %d, want 3", len(s.Nodes))
		}
	})
}

func httptestServer(t *testing.T, f *fakeAPI) string {
	t.Helper()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}
