package publish

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/report/policyreport"
)

// server records every request that reaches it and answers each with an
// empty object of the path's kind.
type server struct {
	mu   sync.Mutex
	seen []string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodDelete {
		w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
		return
	}
	if strings.HasSuffix(r.URL.Path, "reports") && r.Method == http.MethodGet {
		w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`))
		return
	}
	w.Write([]byte(`{"kind":"PolicyReport","apiVersion":"wgpolicyk8s.io/v1alpha2","metadata":{"name":"kubegap"}}`))
}

func (s *server) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func reportObject(kind, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("wgpolicyk8s.io/v1alpha2")
	u.SetKind(kind)
	u.SetName("kubegap")
	u.SetNamespace(ns)
	return u
}

// TestReportsOnlyRefusesEverythingElse sends, through real client-go
// clients, writes and reads of other resources, of the other report API,
// of report subresources, and the verbs a publisher does not use: none may
// reach the server. Then the publisher's own requests must.
func TestReportsOnlyRefusesEverythingElse(t *testing.T) {
	srv := &server{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cfg := ReportsOnly(&rest.Config{Host: ts.URL}, policyreport.PolicyReport)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pr := schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
	cpr := pr.GroupVersion().WithResource("clusterpolicyreports")
	or := schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	apply := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}
	refused := map[string]func() error{
		"create a ConfigMap": func() error {
			_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
			return err
		},
		"patch a ConfigMap": func() error {
			_, err := cs.CoreV1().ConfigMaps("default").Patch(ctx, "c", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
			return err
		},
		"delete a namespace": func() error { return cs.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{}) },
		"get a Secret": func() error {
			_, err := cs.CoreV1().Secrets("default").Get(ctx, "s", metav1.GetOptions{})
			return err
		},
		"list pods": func() error {
			_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		},
		"discovery": func() error {
			_, err := cs.Discovery().ServerVersion()
			return err
		},
		"apply a ClusterRoleBinding": func() error {
			u := reportObject("ClusterRoleBinding", "")
			u.SetAPIVersion("rbac.authorization.k8s.io/v1")
			_, err := dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}).Apply(ctx, "kubegap", u, apply)
			return err
		},
		"apply an OpenReports Report (the other format)": func() error {
			_, err := dyn.Resource(or).Namespace("default").Apply(ctx, "kubegap", reportObject("Report", "default"), apply)
			return err
		},
		"update a report's status subresource": func() error {
			_, err := dyn.Resource(pr).Namespace("default").UpdateStatus(ctx, reportObject("PolicyReport", "default"), metav1.UpdateOptions{})
			return err
		},
		"deletecollection of reports": func() error {
			return dyn.Resource(pr).Namespace("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		},
		"watch reports": func() error {
			_, err := dyn.Resource(pr).Namespace("default").Watch(ctx, metav1.ListOptions{})
			return err
		},
		"create through the cross-namespace path": func() error {
			_, err := dyn.Resource(pr).Create(ctx, reportObject("PolicyReport", ""), metav1.CreateOptions{})
			return err
		},
		"a path that climbs out": func() error {
			hc, err := rest.HTTPClientFor(cfg)
			if err != nil {
				return err
			}
			resp, err := hc.Get(ts.URL + "/apis/wgpolicyk8s.io/v1alpha2/namespaces/default/policyreports/../../../../../../api/v1/secrets")
			if err == nil {
				resp.Body.Close()
			}
			return err
		},
	}
	for name, do := range refused {
		err := do()
		var r *ErrRefused
		if !errors.As(err, &r) {
			t.Errorf("%s: got %v, want ErrRefused", name, err)
		}
	}
	if got := srv.requests(); len(got) != 0 {
		t.Fatalf("refused requests reached the server: %q", got)
	}

	allowed := map[string]func() error{
		"apply a namespaced report": func() error {
			_, err := dyn.Resource(pr).Namespace("default").Apply(ctx, "kubegap", reportObject("PolicyReport", "default"), apply)
			return err
		},
		"apply the cluster report": func() error {
			_, err := dyn.Resource(cpr).Apply(ctx, "kubegap", reportObject("ClusterPolicyReport", ""), apply)
			return err
		},
		"create a report": func() error {
			_, err := dyn.Resource(pr).Namespace("default").Create(ctx, reportObject("PolicyReport", "default"), metav1.CreateOptions{})
			return err
		},
		"update a report": func() error {
			_, err := dyn.Resource(pr).Namespace("default").Update(ctx, reportObject("PolicyReport", "default"), metav1.UpdateOptions{})
			return err
		},
		"get a report": func() error {
			_, err := dyn.Resource(cpr).Get(ctx, "kubegap", metav1.GetOptions{})
			return err
		},
		"list reports in every namespace": func() error {
			_, err := dyn.Resource(pr).List(ctx, metav1.ListOptions{LabelSelector: policyreport.Selector})
			return err
		},
		"delete a report": func() error {
			return dyn.Resource(pr).Namespace("old").Delete(ctx, "kubegap", metav1.DeleteOptions{})
		},
	}
	for name, do := range allowed {
		if err := do(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := srv.requests(); len(got) != len(allowed) {
		t.Errorf("%d of %d allowed requests reached the server: %q", len(got), len(allowed), got)
	}
}

// The OpenReports transport allows that API's resources and refuses the
// PolicyReport ones.
func TestReportsOnlyOpenReports(t *testing.T) {
	srv := &server{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dyn, err := dynamic.NewForConfig(ReportsOnly(&rest.Config{Host: ts.URL}, policyreport.OpenReports))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	or := schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
	if _, err := dyn.Resource(or).Get(ctx, "kubegap", metav1.GetOptions{}); err != nil {
		t.Errorf("get a ClusterReport: %v", err)
	}
	pr := schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}
	_, err = dyn.Resource(pr).Get(ctx, "kubegap", metav1.GetOptions{})
	var r *ErrRefused
	if !errors.As(err, &r) {
		t.Errorf("a PolicyReport read through the OpenReports publisher: %v", err)
	}
	if got := srv.requests(); len(got) != 1 {
		t.Errorf("requests at the server: %q", got)
	}
}
