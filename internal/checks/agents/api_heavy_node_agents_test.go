package agents

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

func TestAPIHeavyNodeAgentsGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "api-heavy-node-agents/gap.yaml"))
	fs, _, ok := checktest.Run(t, apiHeavyNodeAgentsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	type key struct{ ds, title string }
	got := map[key]finding.Severity{}
	for _, f := range fs {
		got[key{f.Objects[0].Name, strings.SplitN(f.Title, " ", 2)[0]}] = f.Severity
	}
	want := map[key]finding.Severity{
		{"calico-node", "calico-node"}: finding.High,   // 700 nodes, no Typha
		{"calico-node", "DaemonSet"}:   finding.Medium, // may list pods and nodes from 700 nodes
		{"fluent-bit", "DaemonSet"}:    finding.High,   // 1,200 nodes, pods through an aggregated role
		{"edge-agent", "DaemonSet"}:    finding.Medium, // wildcard role: Secrets from 80 nodes
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%v: %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	for _, f := range fs {
		if f.Objects[0].Name == "fluent-bit" && !strings.Contains(strings.Join(f.Evidence, "\n"), "ClusterRole logging-reader") {
			t.Errorf("fluent-bit evidence does not name the aggregated role: %v", f.Evidence)
		}
		if f.Objects[0].Name == "edge-agent" && !strings.Contains(f.Title, "secrets") {
			t.Errorf("edge-agent title does not say secrets: %s", f.Title)
		}
	}
}

func TestAPIHeavyNodeAgentsClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "api-heavy-node-agents/clean.yaml"))
	checktest.Quiet(t, apiHeavyNodeAgentsCheck(), s)
}

// From plain files Deployments are not complete: Typha may exist, so
// calico-node without a Typha in the input is a partial note.
func TestCalicoWithoutTyphaNeedsCompleteDeployments(t *testing.T) {
	s := checktest.Load(t, "api-heavy-node-agents/gap.yaml")
	fs, ctx, _ := checktest.Run(t, apiHeavyNodeAgentsCheck(), s)
	for _, f := range fs {
		if strings.HasPrefix(f.Title, "calico-node runs") {
			t.Error("reported calico-node without Typha although Deployments are not complete")
		}
	}
	if _, ok := ctx.Notes()["calico-without-typha"]; !ok {
		t.Error("no partial note")
	}
}

func TestWeightFromNodesWithoutStatus(t *testing.T) {
	s := checktest.Load(t, "api-heavy-node-agents/gap.yaml")
	ds := s.DaemonSets[0]
	ds.Status.DesiredNumberScheduled = 0
	if _, _, ok := weight(&ds, nil); ok {
		t.Error("weight known without status or nodes")
	}
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
	nodes := []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"pool": "b"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n3", Labels: map[string]string{"pool": "a"}}},
	}
	if n, _, ok := weight(&ds, nodes); !ok || n != 2 {
		t.Errorf("weight = %d, %v; want the 2 nodes its nodeSelector matches", n, ok)
	}
}

// nodePool is n Nodes of which the first gpu carry NVIDIA's GPU label and
// taint, like a managed cluster's GPU node group.
func nodePool(n, gpu int) []corev1.Node {
	nodes := make([]corev1.Node, n)
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)
		nodes[i].Labels = map[string]string{"kubernetes.io/os": "linux"}
		if i < gpu {
			nodes[i].Labels["nvidia.com/gpu.present"] = "true"
			nodes[i].Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
	}
	return nodes
}

// Agents told their own node's name (aws-node, a CSI node plugin) are not
// medium on 300 nodes, and a GPU-only DaemonSet counts the 6 GPU nodes,
// not all 300.
func TestAPIHeavyNodeAgentsRealShapes(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "api-heavy-node-agents/node-scoped.yaml"))
	s.Nodes = nodePool(300, 6)
	fs, _, ok := checktest.Run(t, apiHeavyNodeAgentsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := map[string]finding.Finding{}
	for _, f := range fs {
		got[f.Objects[0].Name] = f
	}
	for _, name := range []string{"aws-node", "csi-secrets-store"} {
		f, ok := got[name]
		if !ok || f.Severity != finding.Low {
			t.Errorf("%s: %v (%v), want a low finding", name, f.Severity, ok)
			continue
		}
		if !strings.Contains(strings.Join(f.Evidence, "\n"), "fieldRef spec.nodeName") {
			t.Errorf("%s evidence does not say how it is told its node: %v", name, f.Evidence)
		}
	}
	if f := got["kube-proxy"]; f.Severity != finding.Medium || !strings.Contains(f.Title, "may list endpoints, endpointslices and nodes") {
		t.Errorf("kube-proxy: %v %q, want medium for its endpoint reads with nodes lowered", f.Severity, f.Title)
	}
	if f, ok := got["nvidia-device-plugin"]; ok {
		t.Errorf("nvidia-device-plugin reported on the GPU-only template: %s %v", f.Title, f.Evidence)
	}
	if n, how, _ := weight(daemonSet(t, s, "nvidia-device-plugin"), s.Nodes); n != 6 {
		t.Errorf("nvidia-device-plugin weight %d (%s), want the 6 GPU nodes", n, how)
	}
}

// An agent without node wiring on the same 300 nodes stays medium.
func TestAPIHeavyNodeAgentsUnscopedStaysMedium(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "api-heavy-node-agents/node-scoped.yaml"))
	s.Nodes = nodePool(300, 6)
	daemonSet(t, s, "aws-node").Spec.Template.Spec.Containers[0].Env = nil
	fs, _, _ := checktest.Run(t, apiHeavyNodeAgentsCheck(), s)
	for _, f := range fs {
		if f.Objects[0].Name == "aws-node" && f.Severity != finding.Medium {
			t.Errorf("aws-node without node wiring: %v, want medium", f.Severity)
		}
	}
}

func daemonSet(t *testing.T, s *snapshot.Snapshot, name string) *appsv1.DaemonSet {
	t.Helper()
	for i := range s.DaemonSets {
		if s.DaemonSets[i].Name == name {
			return &s.DaemonSets[i]
		}
	}
	t.Fatalf("no DaemonSet %s in the fixture", name)
	return nil
}

// A status that says no node should run the DaemonSet is read as 0 nodes,
// not as missing status.
func TestWeightZeroFromStatus(t *testing.T) {
	s := checktest.Load(t, "api-heavy-node-agents/gap.yaml")
	ds := s.DaemonSets[0]
	ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: 3}
	if n, how, ok := weight(&ds, nodePool(300, 0)); !ok || n != 0 {
		t.Errorf("weight = %d (%s), %v; want 0 from the status", n, how, ok)
	}
}

// TestAPIHeavyNodeAgentsEvidenceItems: each finding quotes the
// DaemonSet's node count and service account, the ClusterRoleBinding
// subject and the ClusterRole rule (an aggregated role's rule where it is
// written) that allow the read, as the fixture writes them, and resolves
// against it.
func TestAPIHeavyNodeAgentsEvidenceItems(t *testing.T) {
	const file = "api-heavy-node-agents/gap.yaml"
	fs, _, _ := checktest.Run(t, apiHeavyNodeAgentsCheck(), checktest.Complete(checktest.Load(t, file)))
	want := map[string][]string{
		"calico-node runs on 700 nodes without Typha": {
			"DaemonSet/kube-system/calico-node: status.desiredNumberScheduled=700, spec.template.spec.serviceAccountName=calico-node, " +
				"spec.template.spec.containers[name=calico-node].image=docker.io/calico/node:v3.19.1",
		},
		"DaemonSet logging/fluent-bit may list pods cluster-wide from 1200 nodes": {
			"DaemonSet/logging/fluent-bit: status.desiredNumberScheduled=1200, spec.template.spec.serviceAccountName=fluent-bit",
			"ClusterRoleBinding/fluent-bit: roleRef.name=logging-reader, subjects[0].kind=ServiceAccount, subjects[0].name=fluent-bit, subjects[0].namespace=logging",
			`ClusterRole/logging-pods: rules[0]={"apiGroups":[""],"resources":["pods","namespaces"],"verbs":["get","list","watch"]}`,
		},
		"DaemonSet edge/edge-agent may list secrets cluster-wide from 80 nodes": {
			"DaemonSet/edge/edge-agent: status.desiredNumberScheduled=80, spec.template.spec.serviceAccountName=edge-agent",
			"ClusterRoleBinding/edge-admin: roleRef.name=edge-admin, subjects[0].kind=ServiceAccount, subjects[0].name=edge-agent, subjects[0].namespace=edge",
			`ClusterRole/edge-admin: rules[0]={"apiGroups":["*"],"resources":["*"],"verbs":["*"]}`,
		},
		"DaemonSet kube-system/calico-node may list pods, nodes cluster-wide from 700 nodes": {
			"DaemonSet/kube-system/calico-node: status.desiredNumberScheduled=700, spec.template.spec.serviceAccountName=calico-node",
			"ClusterRoleBinding/calico-node: roleRef.name=calico-node, subjects[0].kind=ServiceAccount, subjects[0].name=calico-node, subjects[0].namespace=kube-system",
			`ClusterRole/calico-node: rules[0]={"apiGroups":[""],"resources":["pods","nodes","namespaces"],"verbs":["get","list","watch"]}`,
		},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d findings, want %d", len(fs), len(want))
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		if w, ok := want[f.Title]; !ok || !slices.Equal(got, w) {
			t.Errorf("%q: items\n  %s\nwant\n  %s", f.Title, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 10 {
		t.Errorf("%d items resolved, want 10", n)
	}
}

// TestAPIHeavyNodeAgentsNodeWiringItems: an agent told its node's name
// quotes where (the env variable's fieldRef, never a value), and an agent
// counted from the nodes quotes its nodeSelector; the DaemonSet and RBAC
// items resolve against the fixture (the nodes are made in memory).
func TestAPIHeavyNodeAgentsNodeWiringItems(t *testing.T) {
	const file = "api-heavy-node-agents/node-scoped.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	s.Nodes = nodePool(300, 6)
	fs, _, _ := checktest.Run(t, apiHeavyNodeAgentsCheck(), s)
	var awsNode string
	for _, f := range fs {
		if f.Objects[0].Name == "aws-node" && len(f.EvidenceItems) > 0 {
			awsNode = f.EvidenceItems[0].String()
		}
	}
	if !strings.Contains(awsNode, ".env[name=MY_NODE_NAME].valueFrom.fieldRef.fieldPath=spec.nodeName") {
		t.Errorf("aws-node item %q does not quote its node-name variable's source", awsNode)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n == 0 {
		t.Error("no item resolved")
	}
}
