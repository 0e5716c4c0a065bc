package checks_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// availSnapshot is areaSnapshot with every pod Ready and one instance of
// each gap the availability checks of issue 14 look for: a Deployment
// whose replicas share a node, pods stuck Terminating on one node, an
// unavailable APIService and a CNI DaemonSet without a priority class.
func availSnapshot(b testing.TB) *snapshot.Snapshot {
	s := areaSnapshot()
	ready := []snapshot.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for i := range s.Pods {
		s.Pods[i].Status.Conditions = ready
	}
	now := time.Now()
	for i := range s.Nodes {
		s.Nodes[i].Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(now)
	}
	// app-0000's pods all on node-0000.
	for i := range s.Pods {
		if s.Pods[i].OwnerReferences[0].Name == "app-0000-x" {
			s.Pods[i].Spec.NodeName = "node-0000"
		}
	}
	// Pods stuck Terminating on node-0001 for an hour.
	old := metav1.NewTime(now.Add(-time.Hour))
	for i := range s.Pods {
		if s.Pods[i].Spec.NodeName == "node-0001" {
			s.Pods[i].Own()
			s.Pods[i].DeletionTimestamp = &old
		}
	}
	s.AddCustom(snapshot.APIServices, []unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.custom.metrics.k8s.io"},
		"spec":   map[string]any{"group": "custom.metrics.k8s.io", "version": "v1beta1", "service": map[string]any{"namespace": "monitoring", "name": "adapter"}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck"}}}}}})
	s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "calico-node", Namespace: "kube-system", UID: types.UID("ds-calico")},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "calico-node", Image: "docker.io/calico/node:v3.27.0"}}}}}})
	// node-critical-daemon-oom's gap: the Multus thick daemon at 50Mi.
	plantFixtures(b, s, "resources/testdata/node-critical-daemon-oom/gap.yaml")
	// A live read of the whole cluster: the pods present are all there are.
	return checktest.Complete(s)
}

// availabilityBenchChecks are the checks BenchmarkAvailabilityChecks times.
var availabilityBenchChecks = checks.BenchIDs("BenchmarkAvailabilityChecks",
	"replica-spread", "pods-stuck-terminating", "aggregated-api-unavailable", "system-daemonset-priority", "node-critical-daemon-oom")

// BenchmarkAvailabilityChecks times the availability checks of issue 14 at
// 5,000 nodes and 100,000 pods (each must stay under 0.5 s):
// go test -run NONE -bench AvailabilityChecks ./internal/checks/
func BenchmarkAvailabilityChecks(b *testing.B) {
	benchEach(b, availSnapshot(b), availabilityBenchChecks, 1)
}

// benchEach times each check of ids on s in a sub-benchmark, after one run
// that must find at least least findings: a benchmark whose snapshot no
// longer holds the gaps would time a walk that finds nothing.
func benchEach(b *testing.B, s *snapshot.Snapshot, ids []string, least int) {
	b.Helper()
	for _, id := range ids {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		if fs, err := c.Run(&check.Context{Snapshot: s}); err != nil || len(fs) < least {
			b.Fatalf("%s on the benchmark's gaps: %d findings, want at least %d; error %v", id, len(fs), least, err)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Run(&check.Context{Snapshot: s}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
