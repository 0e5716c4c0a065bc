package audit_test

import (
	"context"
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestKarpenterDisruptionExposureLive: with Karpenter's own NodePool CRD
// (v1.5.3, pinned in test/e2e/testdata/karpenter) installed, a NodePool
// written as the 2025 outage's (WhenEmptyOrUnderutilized, consolidateAfter
// 30s, budgets nodes "100%") is read back live, and the API gateway whose
// two pods run on its nodes with no PodDisruptionBudget is high; a second
// NodePool with no disruption block, which the API server defaults to one
// budget of 10 %, leaves the Service on it unreported. The Karpenter
// controller on 0.36.1 is high for the AMI drift defect.
func TestKarpenterDisruptionExposureLive(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	c.LoadYAML(t, "../testdata/karpenter/karpenter.sh_nodepools.yaml")
	admin := c.Dynamic(t, testcluster.UserAdmin)
	nodePools := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	exposed, defaulted := ns+"-general-purpose", ns+"-defaults"
	nodeNames := []string{ns + "-a", ns + "-b", ns + "-c"}
	// NodePools and Nodes are cluster-scoped and would outlive the test.
	t.Cleanup(func() {
		for _, n := range []string{exposed, defaulted} {
			_ = admin.Resource(nodePools).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
		for _, n := range nodeNames {
			_ = admin.Resource(nodes).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	pool := func(name string, disruption map[string]any) *unstructured.Unstructured {
		spec := map[string]any{"template": map[string]any{"spec": map[string]any{
			"requirements": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}},
			"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}
		if disruption != nil {
			spec["disruption"] = disruption
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
			"metadata": map[string]any{"name": name}, "spec": spec}}
	}
	node := func(name, pool string) *corev1.Node {
		return &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"karpenter.sh/nodepool": pool}}}
	}
	backend := func(app string, onNodes ...string) []runtime.Object {
		labels := map[string]string{"app": app}
		two := int32(2)
		objs := []runtime.Object{
			&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
				ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
				Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/" + app + ":1.0"}}}}}},
			&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
				Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}}},
		}
		// No controller manager runs in the test bed: the pods are written
		// as the scheduler would have bound them.
		for i, n := range onNodes {
			objs = append(objs, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: app + "-" + string(rune('a'+i)), Namespace: ns, Labels: labels},
				Spec: corev1.PodSpec{NodeName: n, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{Name: "app", Image: "registry.example.com/" + app + ":1.0"}}}})
		}
		return objs
	}
	karpenter := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "karpenter", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "karpenter"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "karpenter"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: "public.ecr.aws/karpenter/controller:0.36.1"}}}}}}

	c.Apply(t, pool(exposed, map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "30s",
		"budgets": []any{map[string]any{"nodes": "100%"}}}), pool(defaulted, nil))
	c.Apply(t, node(nodeNames[0], exposed), node(nodeNames[1], exposed), node(nodeNames[2], defaulted), karpenter)
	c.Apply(t, backend("api-gateway", nodeNames[0], nodeNames[1])...)
	c.Apply(t, backend("steady", nodeNames[2], nodeNames[2])...)

	// The API server defaulted the second pool: the check judges what it
	// stored, not what was written.
	got, err := admin.Resource(nodePools).Get(context.Background(), defaulted, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _, _ := unstructured.NestedSlice(got.Object, "spec", "disruption", "budgets"); len(b) != 1 {
		t.Fatalf("the CRD did not default the budgets: %v", got.Object["spec"])
	}

	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--checks", "karpenter-disruption-exposure", "-o", "json")
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	rep, _ := decode(t, r)
	named := map[string]string{} // Deployment in ns -> severity
	for _, raw := range rep.Findings {
		var f struct {
			Severity string
			Objects  []struct{ Kind, Namespace, Name string }
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		for _, o := range f.Objects {
			if o.Kind == "Deployment" && o.Namespace == ns {
				named[o.Name] = f.Severity
			}
		}
	}
	if named["api-gateway"] != "high" {
		t.Errorf("api-gateway: %q, want high (all its pods on NodePool %s, budget 100%%, no PDB)", named["api-gateway"], exposed)
	}
	if sev, ok := named["steady"]; ok {
		t.Errorf("steady is reported %s: its NodePool has the defaulted 10%% budget", sev)
	}
	if named["karpenter"] != "high" {
		t.Errorf("karpenter controller 0.36.1: %q, want high", named["karpenter"])
	}
}
