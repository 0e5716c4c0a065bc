package checks_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

var karpenterBenchChecks = checks.BenchIDs("BenchmarkKarpenterChecks", "karpenter-disruption-exposure")

// karpenterSnapshot is availSnapshot with every node in one Karpenter
// NodePool whose budget allows 100 % for consolidation, every Deployment
// selecting its pods by an app label and backing a Service of that name,
// no PodDisruptionBudget, and the controller on 0.36.1: both rules of
// karpenter-disruption-exposure fire, the consolidation one on each of
// the 1,000 Deployments.
func karpenterSnapshot(b testing.TB) *snapshot.Snapshot {
	s := availSnapshot(b)
	for i := range s.Nodes {
		s.Nodes[i].Labels["karpenter.sh/nodepool"] = "general-purpose"
	}
	byRS := map[string]string{}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		l := map[string]string{"app": d.Name}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: l}
		d.Spec.Template.Labels = l
		byRS[d.Namespace+"/"+d.Name+"-x"] = d.Name
		s.Services = append(s.Services, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace},
			Spec: corev1.ServiceSpec{Selector: l}})
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if app, ok := byRS[p.Namespace+"/"+p.OwnerReferences[0].Name]; ok {
			p.Own()
			p.Labels = map[string]string{"app": app}
		}
	}
	s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "karpenter", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "controller", Image: "public.ecr.aws/karpenter/controller:0.36.1"}}}}}})
	s.AddCustom(snapshot.KarpenterNodePools, []unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "general-purpose"},
		"spec": map[string]any{"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s",
			"budgets": []any{map[string]any{"nodes": "100%"}}}}}}})
	s.Finish()
	return s
}

// BenchmarkKarpenterChecks times karpenter-disruption-exposure at 5,000
// nodes and 100,000 pods:
// go test -run NONE -bench KarpenterChecks ./internal/checks/
func BenchmarkKarpenterChecks(b *testing.B) {
	// The controller on a drift-defect release and the 1,000 Deployments.
	benchEach(b, karpenterSnapshot(b), karpenterBenchChecks, 1001)
}
