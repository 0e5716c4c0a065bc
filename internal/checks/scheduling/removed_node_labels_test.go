package scheduling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRemovedNodeLabelsFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

func removedRefs(fs []finding.Finding) map[string]finding.Finding {
	out := map[string]finding.Finding{}
	for _, f := range fs {
		o := f.Objects[0]
		out[o.Kind+"/"+o.Namespace+"/"+o.Name] = f
	}
	return out
}

// From files (some nodes, no ReplicaSets, no Events) templates requiring
// the removed master label are reported on a 1.30 cluster none of whose
// nodes in the input carries it, and the DaemonSet tolerating only the old
// taint is reported for the control-plane node it cannot run on.
func TestRemovedNodeLabelsGap(t *testing.T) {
	for name, s := range map[string]*snapshot.Snapshot{
		"files": checktest.Load(t, "removed-node-labels/nodes.yaml", "removed-node-labels/gap.yaml"),
		"files, no ReplicaSets or Events": checktest.Without(checktest.Load(t, "removed-node-labels/nodes.yaml",
			"removed-node-labels/gap.yaml"), snapshot.ReplicaSets, snapshot.Events),
	} {
		t.Run(name, func(t *testing.T) {
			fs, _, ok := checktest.Run(t, removedNodeLabelsCheck(), s)
			if !ok {
				t.Fatal("not evaluated")
			}
			got := removedRefs(fs)
			for _, ref := range []string{"Deployment/storage/csi-controller", "DaemonSet/kube-system/route-reflector"} {
				f, ok := got[ref]
				if !ok || !strings.Contains(f.Title, "node-role.kubernetes.io/master") ||
					!strings.Contains(strings.Join(f.Evidence, "\n"), "newest kubelet v1.30.4") {
					t.Errorf("%s: want the removed-label finding citing the kubelet version, got %+v", ref, f)
				}
			}
			la, ok := got["DaemonSet/logging/log-agent"]
			if !ok || !strings.Contains(la.Title, "does not run on control-plane nodes") || !checktest.HasObject([]finding.Finding{la}, "Node", "", "cp-1") {
				t.Errorf("log-agent: want the taint finding naming cp-1, got %+v", la)
			}
			if len(fs) != 3 {
				t.Errorf("%d findings, want 3: %v", len(fs), got)
			}
		})
	}
}

// Templates for the new key and selectors on deprecated labels nodes
// still carry (beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/zone)
// are quiet; so is a cluster before the removal, a node that still
// carries the label, and k3s before its own removal.
func TestRemovedNodeLabelsQuiet(t *testing.T) {
	for name, files := range map[string][]string{
		"new keys":          {"removed-node-labels/nodes.yaml", "removed-node-labels/clean.yaml"},
		"1.23":              {"removed-node-labels/old-cluster.yaml", "removed-node-labels/gap.yaml"},
		"k3s 1.34":          {"removed-node-labels/k3s-134.yaml", "removed-node-labels/gap.yaml"},
		"label still there": {"nodes.yaml", "removed-node-labels/gap.yaml", "removed-node-labels/master-labelled.yaml"},
	} {
		fs, _, _ := checktest.Run(t, removedNodeLabelsCheck(), checktest.Load(t, files...))
		for _, f := range fs {
			t.Errorf("%s: unexpected finding %s", name, f.Title)
		}
	}
}

// With every Node in the input, selector-matches-no-node judges the
// selectors (at high); this check reports the taint rule only.
func TestRemovedNodeLabelsComplete(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "removed-node-labels/nodes.yaml", "removed-node-labels/gap.yaml"))
	fs, _, _ := checktest.Run(t, removedNodeLabelsCheck(), s)
	got := removedRefs(fs)
	if _, ok := got["DaemonSet/logging/log-agent"]; !ok || len(fs) != 1 {
		t.Errorf("complete input: want the log-agent taint finding only, got %v", got)
	}
	others, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	if !checktest.HasObject(others, "Deployment", "storage", "csi-controller") {
		t.Error("selector-matches-no-node should report csi-controller on complete input")
	}
	checktest.Quiet(t, removedNodeLabelsCheck(), checktest.Complete(checktest.Load(t, "removed-node-labels/nodes.yaml", "removed-node-labels/clean.yaml")))
}

// Without any Node the check cannot tell whether the nodes still carry
// the old key: not evaluated, never a finding or a pass.
func TestRemovedNodeLabelsWithoutNodes(t *testing.T) {
	s := checktest.Without(checktest.Load(t, "removed-node-labels/nodes.yaml", "removed-node-labels/gap.yaml"), snapshot.Nodes, snapshot.Events)
	if fs, _, ok := checktest.Run(t, removedNodeLabelsCheck(), s); ok || len(fs) != 0 {
		t.Errorf("without Nodes: evaluated %v, findings %v", ok, fs)
	}
}
