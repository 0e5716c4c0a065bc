package audit_test

import (
	"context"
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestProviderOwnedLive: a live read keeps the markers internal/owner reads
// (a label, and k3s's objectset owner annotations, which trimming would
// otherwise drop), so a finding on an object AKS labels, or k3s applied
// from a packaged manifest, says who owns it; the same finding on an
// unmarked object does not. Nothing but reads.
func TestProviderOwnedLive(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	admin := c.Client(t, testcluster.UserAdmin)
	one := int32(1)
	// The removed-apis check reports a Deployment last applied through
	// extensions/v1beta1: a finding the test bed can raise without nodes.
	legacy := func(name string, labels, annotations map[string]string) *appsv1.Deployment {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[corev1.LastAppliedConfigAnnotation] = `{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"` + name +
			`","namespace":"` + ns + `"}}`
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
			Spec: appsv1.DeploymentSpec{Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/c:1"}}}}},
		}
	}
	// The check groups the Deployments it finds into one finding, so each
	// is audited alone: a finding with objects of several owners is no
	// one provider's.
	cases := []struct {
		d    *appsv1.Deployment
		want string
	}{
		{legacy("aks-addon", map[string]string{"kubernetes.azure.com/managedby": "aks"}, nil), "AKS"},
		{legacy("coredns", nil, map[string]string{"objectset.rio.cattle.io/owner-gvk": "k3s.cattle.io/v1, Kind=Addon",
			"objectset.rio.cattle.io/owner-name": "coredns"}), "k3s"},
		{legacy("mine", nil, nil), ""},
	}
	mark := c.Mark(t)
	for _, tc := range cases {
		deploys := admin.AppsV1().Deployments(ns)
		if _, err := deploys.Create(context.Background(), tc.d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--checks", "removed-apis", "-n", ns, "-o", "json")
		if r.code == 2 {
			t.Fatalf("audit: %s", r.stderr)
		}
		var rep struct {
			Findings []struct {
				Title   string
				Objects []struct{ Kind, Namespace, Name string }
				Owner   *struct{ Provider, Marker, Advice string }
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, f := range rep.Findings {
			if len(f.Objects) != 1 || f.Objects[0].Namespace != ns || f.Objects[0].Name != tc.d.Name {
				continue
			}
			seen = true
			got := ""
			if f.Owner != nil {
				got = f.Owner.Provider
			}
			if got != tc.want {
				t.Errorf("%s: owner %q, want %q (%+v)", tc.d.Name, got, tc.want, f.Owner)
			}
		}
		if !seen {
			t.Errorf("no removed-apis finding on Deployment %s/%s alone:\n%s", ns, tc.d.Name, r.stdout)
		}
		if err := deploys.Delete(context.Background(), tc.d.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range c.RequestsSince(t, mark, testcluster.UserReader) {
		if q.Verb != "get" && q.Verb != "list" && q.Verb != "watch" {
			t.Errorf("the audit sent %s %s", q.Verb, q.RequestURI)
		}
	}
}
