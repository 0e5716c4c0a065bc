package publish

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/report/policyreport"
)

// A server that does not serve the report API answers 404 to the first
// apply; publish stops there and says the CRDs must be installed.
func TestPublishWithoutTheCRDs(t *testing.T) {
	var requests int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}`))
	}))
	defer ts.Close()
	client, err := dynamic.NewForConfig(ReportsOnly(&rest.Config{Host: ts.URL}, policyreport.OpenReports))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("openreports.io/v1alpha1")
	u.SetKind("ClusterReport")
	u.SetName("kubegap")
	res, err := Publish(context.Background(), client, []*unstructured.Unstructured{u, u}, Options{Format: policyreport.OpenReports})
	if err == nil || !strings.Contains(err.Error(), "CRDs must be installed") || !strings.Contains(err.Error(), "openreports.io/v1alpha1") {
		t.Fatalf("got %v", err)
	}
	if res.Applied != 0 || requests != 1 {
		t.Errorf("applied %d, %d requests: publish went on after the first 404", res.Applied, requests)
	}
}

// A namespace deleted between the audit and publish: its report is
// skipped, the rest is written.
func TestPublishSkipsADeletedNamespace(t *testing.T) {
	var applied []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/namespaces/gone/"):
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"namespaces \"gone\" not found","reason":"NotFound","details":{"name":"gone","kind":"namespaces"},"code":404}`))
		case r.Method == http.MethodPatch:
			applied = append(applied, r.URL.Path)
			w.Write([]byte(`{"kind":"PolicyReport","apiVersion":"wgpolicyk8s.io/v1alpha2","metadata":{"name":"kubegap"}}`))
		default:
			w.Write([]byte(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[]}`))
		}
	}))
	defer ts.Close()
	client, err := dynamic.NewForConfig(ReportsOnly(&rest.Config{Host: ts.URL}, policyreport.PolicyReport))
	if err != nil {
		t.Fatal(err)
	}
	obj := func(kind, ns string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("wgpolicyk8s.io/v1alpha2")
		u.SetKind(kind)
		u.SetName("kubegap")
		u.SetNamespace(ns)
		return u
	}
	var log strings.Builder
	res, err := Publish(context.Background(), client, []*unstructured.Unstructured{obj("PolicyReport", "gone"), obj("PolicyReport", "shop"), obj("ClusterPolicyReport", "")},
		Options{Format: policyreport.PolicyReport, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != 2 || res.Skipped != 1 || len(applied) != 2 || !strings.Contains(log.String(), "namespace gone no longer exists") {
		t.Errorf("result %+v, applied %v, log:\n%s", res, applied, log.String())
	}
}
