package runtime

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const vpcCNIRaceGap = "vpc-cni-policy-startup-race/gap.yaml"

// Agent v1.0.8-eksbuild.1 enforcing, one NetworkPolicy: one medium naming
// the aws-node DaemonSet and the policy, quoting the image and the flag.
func TestVPCCNIPolicyStartupRaceGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, vpcCNIPolicyStartupRaceCheck(), checktest.Complete(checktest.Load(t, vpcCNIRaceGap)))
	if !ok || len(fs) != 1 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Cases[0] != caseVPCCNIPolicyRace || !strings.Contains(f.Title, "v1.0.8-eksbuild.1") {
		t.Errorf("finding %+v", f)
	}
	if !checktest.HasObject(fs, "DaemonSet", "kube-system", "aws-node") || !checktest.HasObject(fs, "NetworkPolicy", "shop", "orders-egress") {
		t.Errorf("objects %v", f.Objects)
	}
	if n := checktest.EvidenceTrue(t, fs, vpcCNIRaceGap); n != 1 {
		t.Errorf("%d evidence items resolved, want 1", n)
	}
}

// No NetworkPolicy, all of them read: nothing to enforce, nothing denied.
// Not all read: the rule is partial, never silent.
func TestVPCCNIPolicyStartupRaceNoPolicies(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, vpcCNIRaceGap))
	s.NetworkPolicies = nil
	checktest.Quiet(t, vpcCNIPolicyStartupRaceCheck(), s)
	partial := checktest.Load(t, vpcCNIRaceGap)
	partial.NetworkPolicies = nil
	_, ctx, _ := checktest.Run(t, vpcCNIPolicyStartupRaceCheck(), partial)
	if _, ok := ctx.Notes()[ruleVPCCNIPolicyRace]; !ok {
		t.Error("policies not read completely, but the rule is not noted partial")
	}
}

// A fixed agent (v1.4.2), or an old one with enforcement off: quiet.
func TestVPCCNIPolicyStartupRaceClean(t *testing.T) {
	for _, file := range []string{"vpc-cni-policy-startup-race/clean.yaml", "vpc-cni-policy-startup-race/clean-disabled.yaml"} {
		checktest.Quiet(t, vpcCNIPolicyStartupRaceCheck(), checktest.Complete(checktest.Load(t, file)))
	}
}
