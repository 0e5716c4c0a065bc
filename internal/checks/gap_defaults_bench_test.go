package checks_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
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
	for _, id := range storedVersionBenchChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s})
				if err != nil {
					b.Fatal(err)
				}
				if len(fs) != 1 || len(fs[0].Objects) != 100 {
					b.Fatalf("want one finding on 100 CRDs: %d findings", len(fs))
				}
			}
		})
	}
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
			s.Pods[i].Spec.Containers = append(s.Pods[i].Spec.Containers, snapshot.Container{Name: "istio-proxy", Image: "docker.io/istio/proxyv2:1.20.1"})
		}
	}
	// cilium-dns-proxy-restart's gap: a Cilium 1.17.1 agent DaemonSet and
	// an FQDN policy, in a snapshot read whole (the check says nothing of
	// Cilium unless every DaemonSet was read).
	plantFixtures(b, s, "runtime/testdata/cilium-dns-proxy-restart/gap.yaml")
	checktest.Complete(s)
	for _, id := range runtimeDefaultBenchChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s})
				if err != nil {
					b.Fatal(err)
				}
				if id == "runtime-default-change-exposure" && len(fs) != 2 {
					b.Fatalf("want the tun and the nofile finding: %d findings", len(fs))
				}
				if len(fs) == 0 {
					b.Fatalf("%s found nothing on a snapshot built with its gap", id)
				}
			}
		})
	}
}
