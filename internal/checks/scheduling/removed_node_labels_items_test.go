package scheduling

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestRemovedNodeLabelsEvidenceItems: on a 1.29 cluster from files, the
// label findings quote each template's node selection and the nodes'
// kubelet versions and missing master label (grouped by value); the taint
// finding quotes the DaemonSet's tolerations and the nodes' taints. Every
// item resolves against the fixture.
func TestRemovedNodeLabelsEvidenceItems(t *testing.T) {
	const file = "removed-node-labels/route-reflectors.yaml"
	fs, _, ok := checktest.Run(t, removedNodeLabelsCheck(), checktest.Load(t, file))
	if !ok {
		t.Fatal("not evaluated")
	}
	kubelets := []string{
		"2 Nodes (cp-a, worker-a): status.nodeInfo.kubeletVersion=v1.29.6, metadata.labels[node-role.kubernetes.io/master] absent",
		"Node/worker-b: status.nodeInfo.kubeletVersion=v1.29.4, metadata.labels[node-role.kubernetes.io/master] absent",
	}
	want := map[string][]string{
		"DaemonSet/kube-system/calico-route-reflector": append([]string{
			`DaemonSet/kube-system/calico-route-reflector: spec.template.spec.nodeSelector={"node-role.kubernetes.io/master":""}`}, kubelets...),
		"CronJob/ops/etcd-snapshot": append([]string{
			`CronJob/ops/etcd-snapshot: spec.jobTemplate.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution=` +
				`{"nodeSelectorTerms":[{"matchExpressions":[{"key":"node-role.kubernetes.io/master","operator":"Exists"}]}]}`}, kubelets...),
		"DaemonSet/monitoring/node-exporter": {
			`DaemonSet/monitoring/node-exporter: spec.template.spec.tolerations=[{"effect":"NoSchedule","key":"node-role.kubernetes.io/master","operator":"Exists"}]`,
			"Node/cp-a: spec.taints[key=node-role.kubernetes.io/control-plane].key=node-role.kubernetes.io/control-plane, " +
				"spec.taints[key=node-role.kubernetes.io/control-plane].effect=NoSchedule, spec.taints[key=node-role.kubernetes.io/master] absent",
			"2 Nodes (worker-a, worker-b): spec.taints[key=node-role.kubernetes.io/master] absent",
		},
	}
	got := removedRefs(fs)
	for ref, lines := range want {
		f, ok := got[ref]
		if !ok {
			t.Errorf("no finding on %s", ref)
			continue
		}
		var items []string
		for _, it := range f.EvidenceItems {
			items = append(items, it.String())
		}
		if !slices.Equal(items, lines) {
			t.Errorf("%s: items\n  %q\nwant\n  %q", ref, items, lines)
		}
	}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d", len(fs), len(want))
	}
	checktest.EvidenceTrue(t, fs, file)
}

// One control-plane node "carries" the taint; the message said "1 node in
// the input carry".
func TestRemovedNodeLabelsTaintVerb(t *testing.T) {
	fs, _, _ := checktest.Run(t, removedNodeLabelsCheck(), checktest.Load(t, "removed-node-labels/route-reflectors.yaml"))
	f, ok := removedRefs(fs)["DaemonSet/monitoring/node-exporter"]
	if !ok || !strings.Contains(f.Message, "which 1 node in the input carries:") {
		t.Errorf("message %q", f.Message)
	}
}
