package checks

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// vpaBench are the checks BenchmarkVPAChecks times.
var vpaBench = benchIDs("BenchmarkVPAChecks", "vpa-eviction-loop")

// BenchmarkVPAChecks times vpa-eviction-loop on 5,000 nodes and 100,000
// pods with a VPA in Recreate on every Deployment, a sidecar in every
// template and a Pod LimitRange in every namespace:
// go test -run NONE -bench VPAChecks ./internal/checks/
func BenchmarkVPAChecks(b *testing.B) {
	s := largeSnapshot()
	var vpas, lrs []unstructured.Unstructured
	seen := map[string]bool{}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "busybox:1.36"})
		vpas = append(vpas, unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
			"metadata": map[string]any{"name": d.Name, "namespace": d.Namespace},
			"spec": map[string]any{"targetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": d.Name},
				"updatePolicy": map[string]any{"updateMode": "Recreate"}}}})
		if !seen[d.Namespace] {
			seen[d.Namespace] = true
			lrs = append(lrs, unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "LimitRange",
				"metadata": map[string]any{"name": fmt.Sprintf("pod-limits-%d", len(lrs)), "namespace": d.Namespace},
				"spec":     map[string]any{"limits": []any{map[string]any{"type": "Pod", "max": map[string]any{"memory": "4Gi"}}}}}})
		}
	}
	s.AddCustom(snapshot.VerticalPodAutoscalers, vpas)
	s.AddCustom(snapshot.LimitRanges, lrs)
	for _, r := range []snapshot.Resource{snapshot.VerticalPodAutoscalers, snapshot.LimitRanges, snapshot.Deployments} {
		s.SetComplete(r, nil)
	}
	timeChecksOn(b, s, vpaBench)
}
