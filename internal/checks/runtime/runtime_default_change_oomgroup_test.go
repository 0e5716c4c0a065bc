package runtime

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// Before the 1.28 upgrade: only the 1.27 node on a cgroup v2 OS whose
// kernel monitor reports a single-process kill is flagged; the node
// already on 1.28 and the cgroup v1 node are not.
func TestRuntimeDefaultChangeOOMGroupGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/oom-group-gap.yaml"))
	fs, ctx, ok := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	oom := byRule(fs, ruleOOMGroup)
	if len(oom) != 1 || oom[0].Severity != finding.Medium || oom[0].Cases[0] != caseOOMGroup {
		t.Fatalf("oom-group findings %v, want one medium citing %s", oom, caseOOMGroup)
	}
	if len(oom[0].Objects) != 1 || oom[0].Objects[0].Name != "aks-appnodepool-12345678-vmss000002" {
		t.Errorf("finding names %v, want the 1.27.9 Ubuntu 22.04 node only", oom[0].Objects)
	}
	if !strings.Contains(oom[0].Message, "cgroup v2") {
		t.Errorf("message does not say why the node is cgroup v2: %q", oom[0].Message)
	}
	if n, ok := ctx.Notes()[ruleOOMGroup]; ok {
		t.Errorf("complete input, but the rule is noted: %+v", n)
	}
	checktest.EvidenceTrue(t, fs, "runtime-default-change-exposure/oom-group-gap.yaml")
}

// The same nodes without OOMKilling events: nothing to flag.
func TestRuntimeDefaultChangeOOMGroupClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/oom-group-clean.yaml"))
	fs, _, ok := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if oom := byRule(fs, ruleOOMGroup); len(oom) != 0 {
		t.Errorf("clean nodes flagged: %v", oom)
	}
}

// A node whose OS the cgroup table does not know leaves the rule partial,
// never silent.
func TestRuntimeDefaultChangeOOMGroupUnknownOSIsPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-default-change-exposure/oom-group-gap.yaml"))
	s.Nodes[0].Status.NodeInfo.OSImage = "SomeOS 1"
	fs, ctx, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if oom := byRule(fs, ruleOOMGroup); len(oom) != 0 {
		t.Errorf("unknown OS flagged: %v", oom)
	}
	if _, ok := ctx.Notes()[ruleOOMGroup]; !ok {
		t.Error("unknown OS, but the rule is not noted partial")
	}
}

// Without Events the rule cannot run and says so.
func TestRuntimeDefaultChangeOOMGroupNoEventsSkips(t *testing.T) {
	s := checktest.Load(t, "runtime-default-change-exposure/oom-group-clean.yaml")
	_, ctx, _ := checktest.Run(t, runtimeDefaultChangeExposureCheck(), s)
	if n, ok := ctx.Notes()[ruleOOMGroup]; !ok || !n.Skipped {
		t.Errorf("no events read, rule note %+v, want skipped", n)
	}
}
