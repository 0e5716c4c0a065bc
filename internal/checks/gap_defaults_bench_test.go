package checks_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// storedVersionBenchChecks are the checks BenchmarkStoredVersionChecks times.
var storedVersionBenchChecks = checks.BenchIDs("BenchmarkStoredVersionChecks", "crd-stored-version-drift")

// BenchmarkStoredVersionChecks times crd-stored-version-drift on the
// 5,000-node, 100,000-pod snapshot with 500 CRDs, one in five still listing
// an unserved older version as stored (a cluster with many operators):
// go test -run NONE -bench StoredVersionChecks ./internal/checks/
func BenchmarkStoredVersionChecks(b *testing.B) {
	s := areaSnapshot()
	crds := make([]unstructured.Unstructured, 500)
	for i := range crds {
		stored := []any{"v1"}
		if i%5 == 0 {
			stored = []any{"v1beta1", "v1"}
		}
		crds[i] = unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": fmt.Sprintf("widgets%03d.example.com", i)},
			"spec": map[string]any{"group": "example.com", "versions": []any{
				map[string]any{"name": "v1beta1", "served": false, "storage": false},
				map[string]any{"name": "v1", "served": true, "storage": true}}},
			"status": map[string]any{"storedVersions": stored},
		}}
	}
	s.AddCustom(snapshot.CustomResourceDefinitions, crds)
	benchEachChecked(b, s, storedVersionBenchChecks, func(id string, fs []finding.Finding) string {
		if len(fs) != 1 || len(fs[0].Objects) != 100 {
			return fmt.Sprintf("want one finding on 100 CRDs: %d findings", len(fs))
		}
		return ""
	})
}

// crdSkewBenchChecks are the checks BenchmarkCRDOperatorSkewChecks times.
var crdSkewBenchChecks = checks.BenchIDs("BenchmarkCRDOperatorSkewChecks", "crd-operator-version-skew")

// BenchmarkCRDOperatorSkewChecks times crd-operator-version-skew on the
// 5,000-node, 100,000-pod snapshot with 500 CRDs, ten of them the
// Prometheus Operator's stamped 0.75.2, and one more Deployment running
// its v0.81.0 image: the rule reads every CRD and every Deployment's
// containers.
// go test -run NONE -bench CRDOperatorSkewChecks ./internal/checks/
func BenchmarkCRDOperatorSkewChecks(b *testing.B) {
	s := areaSnapshot()
	crds := make([]unstructured.Unstructured, 500)
	for i := range crds {
		group, meta := "example.com", map[string]any{"name": fmt.Sprintf("widgets%03d.example.com", i)}
		if i < 10 {
			group = "monitoring.coreos.com"
			meta = map[string]any{"name": fmt.Sprintf("kind%02d.monitoring.coreos.com", i),
				"annotations": map[string]any{"operator.prometheus.io/version": "0.75.2"}}
		}
		crds[i] = unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": meta,
			"spec":     map[string]any{"group": group, "versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}}},
		}}
	}
	s.AddCustom(snapshot.CustomResourceDefinitions, crds)
	op := s.Deployments[0]
	op.Name, op.Namespace = "kube-prometheus-stack-operator", "monitoring"
	op.Spec.Template.Spec.Containers = []corev1.Container{{Name: "kube-prometheus-stack", Image: "quay.io/prometheus-operator/prometheus-operator:v0.81.0"}}
	s.Deployments = append(s.Deployments, op)
	benchEachChecked(b, s, crdSkewBenchChecks, func(id string, fs []finding.Finding) string {
		if len(fs) != 1 || len(fs[0].Objects) != 11 {
			return fmt.Sprintf("want one finding on the operator and 10 CRDs: %d findings", len(fs))
		}
		return ""
	})
}

// kedaAuthBenchChecks are the checks BenchmarkKedaAuthChecks times.
var kedaAuthBenchChecks = checks.BenchIDs("BenchmarkKedaAuthChecks", "keda-pod-identity-removal")

// BenchmarkKedaAuthChecks times keda-pod-identity-removal on the
// 5,000-node, 100,000-pod snapshot with 2,000 TriggerAuthentications, one
// in ten on Azure AD Pod Identity, and a KEDA 2.14.3 operator: one
// finding naming the first 50 and the operator.
// go test -run NONE -bench KedaAuthChecks ./internal/checks/
func BenchmarkKedaAuthChecks(b *testing.B) {
	s := areaSnapshot()
	auths := make([]unstructured.Unstructured, 2000)
	for i := range auths {
		provider := "azure-workload"
		if i%10 == 0 {
			provider = "azure"
		}
		auths[i] = unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
			"metadata": map[string]any{"name": fmt.Sprintf("auth-%04d", i), "namespace": fmt.Sprintf("team-%02d", i%50)},
			"spec":     map[string]any{"podIdentity": map[string]any{"provider": provider}},
		}}
	}
	s.AddCustom(snapshot.KedaTriggerAuthentications, auths)
	s.SetComplete(snapshot.KedaTriggerAuthentications, nil)
	s.SetComplete(snapshot.KedaClusterTriggerAuthentications, nil)
	op := s.Deployments[0]
	op.Name, op.Namespace = "keda-operator", "keda"
	op.Spec.Template.Spec.Containers = []corev1.Container{{Name: "keda-operator", Image: "ghcr.io/kedacore/keda:2.14.3"}}
	s.Deployments = append(s.Deployments, op)
	benchEachChecked(b, s, kedaAuthBenchChecks, func(id string, fs []finding.Finding) string {
		if len(fs) != 1 || len(fs[0].Objects) != 51 {
			return fmt.Sprintf("want one finding on 50 authentications and the operator: %d findings", len(fs))
		}
		return ""
	})
}

// runtimeDefaultBenchChecks are the checks BenchmarkRuntimeDefaultChecks times.
var runtimeDefaultBenchChecks = checks.BenchIDs("BenchmarkRuntimeDefaultChecks", "runtime-default-change-exposure", "cilium-dns-proxy-restart")

// BenchmarkRuntimeDefaultChecks times runtime-default-change-exposure on
// the 5,000-node, 100,000-pod snapshot with a third of the nodes on
// Amazon Linux 2, another third on containerd 1.7.24, every tenth
// Deployment a Tailscale proxy with NET_ADMIN and every tenth pod an
// Envoy sidecar: both rules join every node with every workload.
// go test -run NONE -bench RuntimeDefaultChecks ./internal/checks/
func BenchmarkRuntimeDefaultChecks(b *testing.B) {
	s := areaSnapshot()
	for i := range s.Nodes {
		switch i % 3 {
		case 0:
			s.Nodes[i].Status.NodeInfo.OSImage = "Amazon Linux 2"
		case 1:
			s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.7.24"
		}
	}
	for i := range s.Deployments {
		if i%10 == 0 {
			c := &s.Deployments[i].Spec.Template.Spec.Containers[0]
			c.Image = "tailscale/tailscale:stable"
			c.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		}
	}
	for i := range s.Pods {
		if i%10 == 0 {
			s.Pods[i].Spec.Own()
			s.Pods[i].Spec.Containers = append(s.Pods[i].Spec.Containers, snapshot.Container{Name: "istio-proxy", Image: "docker.io/istio/proxyv2:1.20.1"})
		}
	}
	// cilium-dns-proxy-restart's gap: a Cilium 1.17.1 agent DaemonSet and
	// an FQDN policy, in a snapshot read whole (the check says nothing of
	// Cilium unless every DaemonSet was read).
	plantFixtures(b, s, "runtime/testdata/cilium-dns-proxy-restart/gap.yaml")
	checktest.Complete(s)
	benchEachChecked(b, s, runtimeDefaultBenchChecks, func(id string, fs []finding.Finding) string {
		if id == "runtime-default-change-exposure" && len(fs) != 2 {
			return fmt.Sprintf("want the tun and the nofile finding: %d findings", len(fs))
		}
		if len(fs) == 0 {
			return fmt.Sprintf("%s found nothing on a snapshot built with its gap", id)
		}
		return ""
	})
}
