package checks

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks/availability"
	"github.com/kubegap/kubegap/internal/checks/dns"
	"github.com/kubegap/kubegap/internal/checks/scheduling"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// placementSnapshot is largeSnapshot (5,000 nodes, 100,000 pods) with what
// the placement and DNS checks read, at the same scale: nodes in three
// zones and ten pools, three control-plane nodes, a node selector on every
// Deployment (one in ten for a pool that does not exist, one in twenty
// excluding a key no node has), a Service and a 100-endpoint
// EndpointSlice per Deployment (one in ten LoadBalancer with Local
// traffic), CoreDNS with 20 replicas, NodeLocal DNSCache on every node on
// Calico, 500 NetworkPolicies and 10 Karpenter NodePools.
func placementSnapshot() *snapshot.Snapshot {
	s := largeSnapshot()
	zones := []string{"zone-a", "zone-b", "zone-c"}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		n.Labels = map[string]string{"kubernetes.io/hostname": n.Name, "topology.kubernetes.io/zone": zones[i%3],
			"pool": fmt.Sprintf("pool-%d", i%10)}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")}
		if i < 3 {
			n.Labels["node-role.kubernetes.io/control-plane"] = ""
			n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
		}
	}
	isCtrl := true
	for i := range s.Deployments {
		d := &s.Deployments[i]
		spec := &d.Spec.Template.Spec
		switch {
		case i%10 == 0:
			spec.NodeSelector = map[string]string{"pool": "pool-gone"}
		case i%20 == 1:
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "node-role.kubernetes.io/master", Operator: corev1.NodeSelectorOpDoesNotExist}}}}}}}
		default:
			spec.NodeSelector = map[string]string{"pool": fmt.Sprintf("pool-%d", i%10)}
		}
		app := d.Spec.Template.Labels["app"]
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: d.Namespace},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": app}, Type: corev1.ServiceTypeClusterIP}}
		if i%10 == 5 {
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}
		s.Services = append(s.Services, svc)
		sl := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: app + "-x", Namespace: d.Namespace,
			Labels: map[string]string{"kubernetes.io/service-name": app}}}
		for r := range 100 {
			node := fmt.Sprintf("node-%04d", (i*100+r)%5000)
			sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.%d.%d.1", i%250, r)},
				NodeName: &node, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("%s-%03d", app, r)}})
		}
		s.EndpointSlices = append(s.EndpointSlices, sl)
	}
	two := int32(20)
	dnsLabels := map[string]string{"k8s-app": "kube-dns"}
	s.Deployments = append(s.Deployments, appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", UID: "dep-coredns"},
		Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: dnsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: dnsLabels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.11.3",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("170Mi")}}}}}}}})
	var pods []corev1.Pod
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for r := range 20 {
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("coredns-%02d", r), Namespace: "kube-system", Labels: dnsLabels},
			Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("node-%04d", r*7), Containers: []corev1.Container{{Name: "coredns", Image: "coredns"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready}})
	}
	nl := map[string]string{"k8s-app": "node-local-dns"}
	s.DaemonSets = append(s.DaemonSets,
		appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "node-local-dns", Namespace: "kube-system", UID: "ds-nodelocal"},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: nl}, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: nl}, Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "node-cache", Image: "registry.k8s.io/dns/k8s-dns-node-cache:1.23.1"}}}}}},
		appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "calico-node", Namespace: "calico-system", UID: "ds-calico"},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "calico-node", Image: "docker.io/calico/node:v3.27.3"}}}}}},
		// Tolerates the master taint kubeadm stopped applying in 1.25, not
		// the control-plane nodes' taint (removed-node-labels).
		appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "legacy-agent", Namespace: "logging", UID: "ds-legacy"},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers:  []corev1.Container{{Name: "agent", Image: "example.com/agent:1.0"}}}}}})
	for i := range 5000 {
		st := corev1.ContainerStatus{Name: "node-cache", RestartCount: int32(i % 3)}
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-local-dns-%04d", i), Namespace: "kube-system", Labels: nl,
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "node-local-dns", UID: types.UID("ds-nodelocal"), Controller: &isCtrl}}},
			Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("node-%04d", i), Containers: []corev1.Container{{Name: "node-cache", Image: "node-cache"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready, ContainerStatuses: []corev1.ContainerStatus{st}}})
	}
	_, addPods, _ := snapshot.ListKind(snapshot.Pods)
	addPods(s, &corev1.PodList{Items: pods})
	for i := range 500 {
		s.NetworkPolicies = append(s.NetworkPolicies, networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("np-%d", i), Namespace: fmt.Sprintf("ns-%03d", i%200)},
			Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}}}})
	}
	var pools []unstructured.Unstructured
	for i := range 10 {
		pools = append(pools, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": fmt.Sprintf("np-%d", i)},
			"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": fmt.Sprintf("team-%d", i)}},
				"spec": map[string]any{"requirements": []any{map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In",
					"values": []any{"zone-a", "zone-b"}}}}}}}})
	}
	s.AddCustom(snapshot.KarpenterNodePools, pools)
	for _, r := range snapshot.Known() {
		s.SetCoverage(r, snapshot.StatusRead, "")
		s.SetComplete(r, nil)
	}
	s.Finish()
	return s
}

func placementChecks() []check.Check {
	var out []check.Check
	for _, area := range [][]check.Check{scheduling.Checks(), availability.Checks(), dns.Checks()} {
		out = append(out, area...)
	}
	return out
}

// TestPlacementChecksScale runs the placement and DNS checks on 5,000
// nodes and 100,000 pods and checks what they report at that size. Their
// speed is measured by BenchmarkPlacementChecks.
func TestPlacementChecksScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-pod snapshot")
	}
	s := placementSnapshot()
	counts := map[string]int{}
	for _, c := range placementChecks() {
		fs, err := c.Run(&check.Context{Snapshot: s})
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		counts[c.ID] = len(fs)
		for _, f := range fs {
			if len(f.Objects) > 2*check.MaxListedObjects+10 || len(f.Evidence) > 2*check.MaxListedObjects+10 {
				t.Errorf("%s: finding %q has %d objects and %d evidence lines, not capped", c.ID, f.Title, len(f.Objects), len(f.Evidence))
			}
		}
	}
	// One Deployment in ten selects a pool that does not exist; one in
	// twenty excludes the master label no node carries.
	if counts["selector-matches-no-node"] != 100+50 {
		t.Errorf("selector-matches-no-node: %d findings, want 150", counts["selector-matches-no-node"])
	}
	if counts["removed-node-labels"] != 1 {
		t.Errorf("removed-node-labels: %d findings, want 1 (legacy-agent tolerating only the master taint)", counts["removed-node-labels"])
	}
	if counts["nodelocal-dns-hazards"] != 1 {
		t.Errorf("nodelocal-dns-hazards: %d findings, want 1 (Calico and 500 ingress policies)", counts["nodelocal-dns-hazards"])
	}
	t.Logf("findings per check: %v", counts)
}

// placementBenchChecks are the checks BenchmarkPlacementChecks times.
var placementBenchChecks = benchChecks("BenchmarkPlacementChecks", placementChecks()...)

// BenchmarkPlacementChecks times each placement and DNS check on 5,000
// nodes and 100,000 pods (each must stay under 0.5 s):
// go test -run NONE -bench PlacementChecks ./internal/checks/
func BenchmarkPlacementChecks(b *testing.B) {
	s := placementSnapshot()
	for _, c := range placementBenchChecks {
		b.Run(c.ID, func(b *testing.B) {
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
