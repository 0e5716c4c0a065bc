package snapshot

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A CSR keeps its signer, requestor and conditions' type, status and
// reason; the PEM request, the issued certificate, groups and usages go.
func TestTrimCSR(t *testing.T) {
	u := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
		"metadata": map[string]any{"name": "csr-fd8gx"},
		"spec": map[string]any{"signerName": "kubernetes.io/kube-apiserver-client-kubelet",
			"username": "system:node:worker0", "request": "LS0tLS1CRUdJTg==", "groups": []any{"system:nodes"},
			"usages": []any{"client auth"}},
		"status": map[string]any{"certificate": "LS0tLS1CRUdJTg==", "conditions": []any{
			map[string]any{"type": "Approved", "status": "True", "reason": "AutoApproved", "message": "approved by the controller"}}},
	}}
	trimCustom(&u)
	want := map[string]any{
		"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
		"metadata": map[string]any{"name": "csr-fd8gx"},
		"spec":     map[string]any{"signerName": "kubernetes.io/kube-apiserver-client-kubelet", "username": "system:node:worker0"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "True", "reason": "AutoApproved"}}},
	}
	if !reflect.DeepEqual(u.Object, want) {
		t.Errorf("trimmed to %v, want %v", u.Object, want)
	}
	pending := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
		"metadata": map[string]any{"name": "csr-k55sq"},
		"spec":     map[string]any{"signerName": "kubernetes.io/kubelet-serving", "request": "LS0t"},
		"status":   map[string]any{},
	}}
	trimCustom(&pending)
	if _, ok := pending.Object["status"]; ok || pending.Object["spec"].(map[string]any)["request"] != nil {
		t.Errorf("pending CSR trimmed to %v, want no status and no request", pending.Object)
	}
}
