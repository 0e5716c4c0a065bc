package audit_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestDaprTrustBundleLive: Dapr 1.14's Sentry root, published in ConfigMap
// dapr-system/dapr-trust-bundle and ending in 20 days, is read by name
// with the read-only user's RBAC and reported high by certificate-expiry;
// the Secret of the same name is never requested.
func TestDaprTrustBundleLive(t *testing.T) {
	c := testcluster.Get(t)
	labels := map[string]string{"app": "dapr-sentry"}
	c.Apply(t,
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "dapr-trust-bundle", Namespace: "dapr-system", Labels: labels},
			Data:       map[string]string{"ca.crt": string(caExpiringIn(t, 20*24*time.Hour))},
		},
		&appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "dapr-sentry", Namespace: "dapr-system", Labels: labels},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "dapr-sentry", Image: "ghcr.io/dapr/sentry:1.14.4"}}}}},
		})

	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--checks", "certificate-expiry", "-o", "json")
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	rep, _ := decode(t, r)
	found := false
	for _, raw := range rep.Findings {
		var f struct {
			Severity string
			Cases    []string
			Objects  []struct{ Kind, Namespace, Name string }
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if f.Severity == "high" && slices.Contains(f.Cases, "dapr-sentry-one-year-root-cert-expiry-2021-2024") &&
			slices.ContainsFunc(f.Objects, func(o struct{ Kind, Namespace, Name string }) bool {
				return o.Kind == "ConfigMap" && o.Namespace == "dapr-system" && o.Name == "dapr-trust-bundle"
			}) {
			found = true
		}
	}
	if !found {
		t.Errorf("no high certificate-expiry finding on ConfigMap dapr-system/dapr-trust-bundle citing the Dapr case: %s", r.stdout)
	}
	for _, q := range c.RequestsSince(t, mark, testcluster.UserReader) {
		if q.Resource == "secrets" {
			t.Errorf("the audit requested a Secret: %s %s", q.Verb, q.RequestURI)
		}
		if q.Resource == "configmaps" && q.Namespace == "dapr-system" && (q.Verb != "get" || q.Name != "dapr-trust-bundle") {
			t.Errorf("the audit sent %s %s", q.Verb, q.RequestURI)
		}
	}
}
