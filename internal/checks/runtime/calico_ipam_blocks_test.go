package runtime

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
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
