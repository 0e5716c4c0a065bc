package runtime

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Before the scale-up: 57 of the pool's 64 blocks are held for nodes that
// are gone, and 60 are claimed. Both rules are high and cite the case;
// the stranded finding names the departed nodes.
func TestCalicoIPAMBlocksGap(t *testing.T) {
	const file = "calico-ipam-blocks/gap.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, calicoIPAMBlocksCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	stranded, claimed := byRule(fs, ruleStrandedBlocks), byRule(fs, rulePoolBlocksTaken)
	if len(stranded) != 1 || stranded[0].Severity != finding.High || stranded[0].Cases[0] != calicoIPAMCase {
		t.Fatalf("stranded findings %v, want one high citing %s", stranded, calicoIPAMCase)
	}
	if !strings.Contains(stranded[0].Title, "57 blocks") || !strings.Contains(stranded[0].Message, "89%") {
		t.Errorf("stranded finding %q / %q: want 57 blocks, 89%% of capacity", stranded[0].Title, stranded[0].Message)
	}
	if strings.Contains(strings.Join(stranded[0].Evidence, " "), "ip-10-20-1-11") {
		t.Error("a live node's affinity is counted as stranded")
	}
	if len(claimed) != 1 || claimed[0].Severity != finding.High || !strings.Contains(claimed[0].Title, "60 of the 64") {
		t.Fatalf("claimed findings %v, want one high: 60 of 64 blocks", claimed)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// Released state is quiet: one block per live node, and an affinity
// being deleted for a removed node does not count.
func TestCalicoIPAMBlocksClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "calico-ipam-blocks/clean.yaml"))
	checktest.Quiet(t, calicoIPAMBlocksCheck(), s)
}

// Without the Node list read whole, stranded affinities cannot be told
// from live ones: the rule says so instead of passing.
func TestCalicoIPAMBlocksNodesIncomplete(t *testing.T) {
	s := checktest.Load(t, "calico-ipam-blocks/gap.yaml")
	fs, _, _ := checktest.Run(t, calicoIPAMBlocksCheck(), s)
	if got := byRule(fs, ruleStrandedBlocks); len(got) != 0 {
		t.Errorf("stranded findings %v from a partial Node list", got)
	}
}

// After a pool migration the old pool is disabled and its blocks still
// have affinities: they do not take blocks of the enabled pool, so one
// affinity in the enabled /24 (four /26 blocks) is 25 percent, quiet.
func TestCalicoIPAMBlocksCountsOnlyEnabledPools(t *testing.T) {
	s := snapshot.New(snapshot.Source{})
	s.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}}
	pool := func(name, cidr string, disabled bool) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "IPPool",
			"metadata": map[string]any{"name": name},
			"spec":     map[string]any{"cidr": cidr, "blockSize": int64(26), "disabled": disabled}}}
	}
	s.AddCustom(snapshot.CalicoIPPools, []unstructured.Unstructured{pool("old", "10.1.0.0/24", true), pool("new", "10.0.0.0/24", false)})
	var affs []unstructured.Unstructured
	for i, cidr := range []string{"10.1.0.0/26", "10.1.0.64/26", "10.1.0.128/26", "10.1.0.192/26", "10.0.0.0/26"} {
		affs = append(affs, unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "BlockAffinity",
			"metadata": map[string]any{"name": fmt.Sprintf("aff-%d", i)},
			"spec":     map[string]any{"node": "node-a", "cidr": cidr, "state": "confirmed", "deleted": "false"}}})
	}
	s.AddCustom(snapshot.CalicoBlockAffinities, affs)
	for _, r := range []snapshot.Resource{snapshot.CalicoIPPools, snapshot.CalicoBlockAffinities, snapshot.Nodes} {
		s.SetComplete(r, nil)
	}
	fs, _, ok := checktest.Run(t, calicoIPAMBlocksCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if got := byRule(fs, rulePoolBlocksTaken); len(got) != 0 {
		t.Errorf("claimed findings %v: blocks of a disabled pool counted against the enabled one", got)
	}
}
