package runtime

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// On AKS 1.24 (Ubuntu 18.04, cgroup v1) the old JRE works today: only the
// upgrade rule speaks, at medium, naming the pod and the node, and citing
// the AKS 1.25 case; the Java 21 image is not reported.
func TestJVMCgroupV2AtUpgradeGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/aks-124.yaml"))
	fs, _, ok := checktest.RunImages(t, jvmCgroupCompatCheck(), s, jvmImages())
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v, want one", ok, fs)
	}
	f := fs[0]
	if f.Rule != ruleJVMCgroupV2Upgrade || f.Severity != finding.Medium || f.Cases[0] != caseCgroupV2JRE {
		t.Fatalf("finding %+v, want a medium %s finding citing %s", f, ruleJVMCgroupV2Upgrade, caseCgroupV2JRE)
	}
	if !checktest.HasObject(fs, "Pod", "shop", "orders-7d9f-a") || !checktest.HasObject(fs, "Node", "", "aks-nodepool1-12345678-vmss000000") ||
		checktest.HasObject(fs, "Pod", "shop", "billing") {
		t.Errorf("objects %+v, want the orders pod and the node only", f.Objects)
	}
	if ev := strings.Join(f.Evidence, "\n"); !strings.Contains(ev, "Ubuntu 22.04") || !strings.Contains(ev, "Azure/AKS/issues/3443") {
		t.Errorf("evidence does not say the 1.25 move and its source: %s", ev)
	}
	if n := checktest.EvidenceTrue(t, fs, "jvm-cgroup-compat/aks-124.yaml"); n < 1 {
		t.Errorf("%d evidence items, want the node quoted", n)
	}
}

// A runtime that reads cgroup v2 is quiet; so is the old JRE on the same
// pool once it is past the move (the cgroup-v2 rule judges it there), and
// on a cluster that is not AKS.
func TestJVMCgroupV2AtUpgradeQuiet(t *testing.T) {
	checktest.QuietImages(t, jvmCgroupCompatCheck(), checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/aks-124-clean.yaml")), jvmImages())
	for name, edit := range map[string]func(s *snapshot.Snapshot){
		"at 1.25":      func(s *snapshot.Snapshot) { s.Nodes[0].Status.NodeInfo.KubeletVersion = "v1.25.6" },
		"not AKS":      func(s *snapshot.Snapshot) { s.Nodes[0].Labels = nil; s.Nodes[0].Spec.ProviderID = "" },
		"Ubuntu 20.04": func(s *snapshot.Snapshot) { s.Nodes[0].Status.NodeInfo.OSImage = "Ubuntu 20.04.6 LTS" },
	} {
		s := checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/aks-124.yaml"))
		edit(s)
		fs, _, _ := checktest.RunImages(t, jvmCgroupCompatCheck(), s, jvmImages())
		if got := byRule(fs, ruleJVMCgroupV2Upgrade); len(got) != 0 {
			t.Errorf("%s: upgrade findings %+v, want none", name, got)
		}
	}
}

// Without image inspection the rule is not requested, never a pass.
func TestJVMCgroupV2AtUpgradeNotRequested(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "jvm-cgroup-compat/aks-124.yaml"))
	_, ctx, _ := checktest.RunImages(t, jvmCgroupCompatCheck(), s, nil)
	if !strings.Contains(ctx.Notes()[ruleJVMCgroupV2Upgrade].Reason, "--inspect-images") {
		t.Errorf("note %+v, want --inspect-images named", ctx.Notes()[ruleJVMCgroupV2Upgrade])
	}
}
