package scheduling

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// selectorItems runs selector-matches-no-node on s and checks that each
// finding whose title holds a key of want carries those items, and that
// every item resolves against files.
func selectorItems(t *testing.T, s *snapshot.Snapshot, want map[string][]string, files ...string) {
	t.Helper()
	fs, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		for part, lines := range want {
			if !strings.Contains(f.Title, part) {
				continue
			}
			delete(want, part)
			for _, l := range lines {
				if !slices.Contains(got, l) {
					t.Errorf("%q: no item\n  %s\nin\n  %s", f.Title, l, strings.Join(got, "\n  "))
				}
			}
		}
	}
	for part := range want {
		t.Errorf("no finding %q", part)
	}
	checktest.EvidenceTrue(t, fs, files...)
}

// TestSelectorEvidenceItems: with every node read, the findings quote the
// template's node selection (and tolerations), and the nodes' values of
// the labels it names or the taints that repel it, grouped by value.
func TestSelectorEvidenceItems(t *testing.T) {
	selectorItems(t, checktest.Complete(checktest.Load(t, "nodes.yaml", "gap.yaml")), map[string][]string{
		"Deployment ml/trainer requires nodes that do not exist": {
			`Deployment/ml/trainer: spec.template.spec.nodeSelector={"accelerator":"nvidia-a100"}`,
			"3 Nodes (cp-1, worker-1, worker-2): metadata.labels[accelerator] absent",
		},
		"route-reflector selects nodes by the removed": {
			`DaemonSet/kube-system/route-reflector: spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution=` +
				`{"nodeSelectorTerms":[{"matchExpressions":[{"key":"node-role.kubernetes.io/master","operator":"Exists"}]}]}`,
			"3 Nodes (cp-1, worker-1, worker-2): metadata.labels[node-role.kubernetes.io/master] absent",
		},
		"cp-agent selects only nodes whose taints it does not tolerate": {
			`DaemonSet/kube-system/cp-agent: spec.template.spec.tolerations=[{"effect":"NoSchedule","key":"node-role.kubernetes.io/master","operator":"Exists"}]`,
			"Node/cp-1: spec.taints[key=node-role.kubernetes.io/control-plane].key=node-role.kubernetes.io/control-plane, " +
				"spec.taints[key=node-role.kubernetes.io/control-plane].effect=NoSchedule",
		},
		"upgrade-agents excludes nodes by a removed label": {
			"2 Nodes (worker-1, worker-2): metadata.labels[node-role.kubernetes.io/master] absent, metadata.labels[node-role.kubernetes.io/control-plane] absent",
		},
	}, "nodes.yaml", "gap.yaml")
}

// TestSelectorVerdictEvidenceItems: from files, the scheduler's verdict is
// quoted where it was read (the pod's PodScheduled condition or its
// FailedScheduling Event), with the pods' placement and controller and
// the template's selection.
func TestSelectorVerdictEvidenceItems(t *testing.T) {
	const msg = "0/7 nodes are available: 7 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling."
	selectorItems(t, checktest.Load(t, "nodes.yaml", "unschedulable.yaml"), map[string][]string{
		"no node matching Deployment ml/trainer": {
			"Event/ml/trainer-5c9d7b6f4-abcde.1800b: involvedObject.name=trainer-5c9d7b6f4-abcde, reason=FailedScheduling, message=" + msg,
			"Pod/ml/trainer-5c9d7b6f4-abcde: status.phase=Pending, spec.nodeName absent, metadata.ownerReferences[controller=true].kind=ReplicaSet, " +
				"metadata.ownerReferences[controller=true].name=trainer-5c9d7b6f4, metadata.labels[pod-template-hash]=5c9d7b6f4",
			`Deployment/ml/trainer: spec.template.spec.nodeSelector={"accelerator":"nvidia-a100"}`,
		},
		"no node matching Deployment monitoring/metrics-collector": {
			"Pod/monitoring/metrics-collector-6b7f9c8d5-x2x9q: status.conditions[type=PodScheduled].status=False, " +
				"status.conditions[type=PodScheduled].reason=Unschedulable, status.conditions[type=PodScheduled].message=" + msg,
		},
	}, "nodes.yaml", "unschedulable.yaml")
}

// The legacy-label finding counted one control-plane node as "1 nodes
// carry".
func TestSelectorLegacyCountSingular(t *testing.T) {
	fs, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), checktest.Complete(checktest.Load(t, "nodes.yaml", "gap.yaml")))
	n := 0
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		if strings.Contains(ev, "1 nodes carry") {
			t.Errorf("%q: %q", f.Title, f.Evidence)
		}
		if strings.Contains(ev, "1 node carries node-role.kubernetes.io/control-plane, 0 carry") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d findings count the one control-plane node, want the 2 legacy-label findings", n)
	}
}
