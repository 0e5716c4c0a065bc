package audit_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// caExpiringIn makes a self-signed CA certificate, PEM-encoded, that
// expires d from now.
func caExpiringIn(t *testing.T, d time.Duration) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "e2e-webhook-ca"},
		NotBefore: time.Now().Add(-355 * 24 * time.Hour), NotAfter: time.Now().Add(d),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

const dexAuthRequests = 1100

// TestCertificateExpiryAndObjectCounts: a webhook whose CA expires in ten
// days, a Deployment whose old ReplicaSets outgrow its history limit and a
// Dex AuthRequest CRD with 1,100 objects, audited as the read-only user.
// The AuthRequests are counted with one LIST of limit=1, and the whole
// audit only gets, lists and watches (ConfigMaps only by name).
func TestCertificateExpiryAndObjectCounts(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	c.LoadYAML(t, "testdata/dex-crd.yaml")

	// Fails open and matches a group nothing here creates: it cannot
	// disturb the other tests while it exists.
	ignore, none := admissionv1.Ignore, admissionv1.SideEffectClassNone
	path := "/validate"
	hook := &admissionv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-expiring"},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "validate.e2e.kubegap.dev",
			ClientConfig: admissionv1.WebhookClientConfig{
				Service:  &admissionv1.ServiceReference{Namespace: ns, Name: "webhook", Path: &path},
				CABundle: caExpiringIn(t, 10*24*time.Hour),
			},
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{"e2e.kubegap.dev"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}},
			FailurePolicy: &ignore, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	objs := []runtime.Object{hook}
	limit, zero, two := int32(2), int32(0), int32(2)
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	objs = append(objs, &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: &two, RevisionHistoryLimit: &limit,
			Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	})
	yes := true
	for i := range 7 {
		objs = append(objs, &appsv1.ReplicaSet{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-old-%d", i), Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "x", Controller: &yes}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
		})
	}
	for i := range dexAuthRequests {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "dex.coreos.com/v1", "kind": "AuthRequest",
			"metadata": map[string]any{"name": fmt.Sprintf("req-%04d", i), "namespace": ns},
			"clientID": "e2e",
		}})
	}
	c.Apply(t, objs...)

	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-o", "json")
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	rep, _ := decode(t, r)

	type fnd struct {
		Check, Severity, Title, Message string
		Objects                         []struct{ Kind, Namespace, Name string }
	}
	var found []fnd
	for _, raw := range rep.Findings {
		var f fnd
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		found = append(found, f)
	}
	has := func(check, sev, kind, ns, name string) bool {
		return slices.ContainsFunc(found, func(f fnd) bool {
			return f.Check == check && f.Severity == sev && slices.ContainsFunc(f.Objects, func(o struct{ Kind, Namespace, Name string }) bool {
				return o.Kind == kind && o.Namespace == ns && o.Name == name
			})
		})
	}
	if !has("certificate-expiry", "high", "ValidatingWebhookConfiguration", "", hook.Name) {
		t.Errorf("no high certificate-expiry finding on the webhook whose CA expires in 10 days")
	}
	if !has("object-count-explosion", "medium", "Deployment", ns, "web") {
		t.Errorf("no object-count-explosion finding on the Deployment with 7 old ReplicaSets against a limit of 2")
	}
	if !has("object-count-explosion", "medium", "CustomResourceDefinition", "", "authrequests.dex.coreos.com") {
		t.Errorf("no object-count-explosion finding on %d AuthRequests", dexAuthRequests)
	}
	for _, cov := range rep.Coverage {
		if cov.Resource == snapshot.DexAuthRequests.String() && (cov.Status != "read" || cov.Count != dexAuthRequests) {
			t.Errorf("AuthRequests coverage %+v, want read with count %d", cov, dexAuthRequests)
		}
	}

	reqs := c.RequestsSince(t, mark, testcluster.UserReader)
	counts := 0
	named := map[string]bool{}
	for _, nn := range snapshot.NamedConfigMaps {
		named[nn] = true
	}
	for _, q := range reqs {
		switch q.Verb {
		case "get", "list", "watch":
		default:
			t.Errorf("the audit sent %s %s", q.Verb, q.RequestURI)
		}
		switch {
		case q.Resource == "secrets":
			t.Errorf("the audit read secrets: %s", q.RequestURI)
		case q.Resource == "configmaps" && (q.Verb != "get" || !named[q.Namespace+"/"+q.Name]):
			t.Errorf("the audit read a ConfigMap it does not read by name: %s %s", q.Verb, q.RequestURI)
		case q.Resource == "authrequests" || q.APIGroup == "events.k8s.io":
			u, err := url.Parse(q.RequestURI)
			if err != nil || u.Query().Get("limit") != "1" {
				t.Errorf("a counted resource was read without limit=1: %s", q.RequestURI)
			}
			if q.Resource == "authrequests" {
				counts++
			}
		}
	}
	if counts != 1 {
		t.Errorf("AuthRequests were read with %d requests, want one LIST of limit=1", counts)
	}
}
