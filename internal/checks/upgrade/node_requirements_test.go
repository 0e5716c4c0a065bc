package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// byTitle returns the findings whose title holds part.
func byTitle(fs []finding.Finding, part string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if strings.Contains(f.Title, part) {
			out = append(out, f)
		}
	}
	return out
}

// TestRuntimeAtTarget: going to 1.26, containerd 1.5 and dockershim nodes
// are high "before" findings per pool, cri-dockerd nodes medium, current
// containerd silent; staying below 1.24 says nothing.
func TestRuntimeAtTarget(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "node-requirements.yaml")), "v1.25.16")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.26"))

	old := byTitle(fs, "cannot serve kubelet 1.26")
	if len(old) != 1 || old[0].Severity != finding.High || old[0].Preflight != finding.PreflightBefore ||
		!checktest.HasObject(old, "Node", "", "legacy-1") || !checktest.HasObject(old, "Node", "", "legacy-2") ||
		!strings.Contains(old[0].Title, "agentpool=legacy") || !citesCase(old[0], caseCRIv1) {
		t.Errorf("old containerd: %+v", old)
	}
	shim := byTitle(fs, "dockershim")
	if len(shim) != 1 || shim[0].Severity != finding.High || !checktest.HasObject(shim, "Node", "", "docker-1") ||
		!citesCase(shim[0], caseDockershimSock) {
		t.Errorf("dockershim: %+v", shim)
	}
	cri := byTitle(fs, "cri-dockerd serving CRI v1")
	if len(cri) != 1 || cri[0].Severity != finding.Medium || !checktest.HasObject(cri, "Node", "", "cridockerd-1") {
		t.Errorf("cri-dockerd: %+v", cri)
	}
	for _, f := range fs {
		if checktest.HasObject([]finding.Finding{f}, "Node", "", "good-1") && f.Severity >= finding.Medium {
			t.Errorf("containerd 1.7 node named: %s", f.Title)
		}
	}
	if n := ctx.Notes()[ruleRuntimeAtTarget]; n.Reason != "" || n.Skipped {
		t.Errorf("every runtime is judged, yet: %+v", n)
	}

	// Kubelet 1.24 needs no CRI v1 yet; only dockershim's removal bites.
	s = at(checktest.Complete(checktest.Load(t, "node-requirements.yaml")), "v1.23.17")
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.24"))
	if len(byTitle(fs, "cannot serve kubelet")) != 0 || len(byTitle(fs, "cri-dockerd serving")) != 0 || len(byTitle(fs, "dockershim")) != 1 {
		t.Errorf("at 1.24: %+v", fs)
	}
}

// TestRuntimeAtTargetUnknown: a node without a runtime version leaves the
// rule partial, never passed.
func TestRuntimeAtTargetUnknown(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "node-requirements.yaml")), "v1.25.16")
	s.Nodes[0].Status.NodeInfo.ContainerRuntimeVersion = ""
	s.Nodes[1].Status.NodeInfo.ContainerRuntimeVersion = "cri-o://1.25.4"
	_, ctx := runWith(t, upgradePreflightCheck(), s, target("1.26"))
	if n := ctx.Notes()[ruleRuntimeAtTarget]; n.Reason == "" {
		t.Errorf("unknown runtimes, yet no partial note: %+v", ctx.Notes())
	}
}

// TestNodeOSAtTarget: EKS Amazon Linux 2 node groups are named going to
// 1.33 (no AL2 AMIs from 1.33), not going to 1.32; AL2023 never.
func TestNodeOSAtTarget(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "eks-al2.yaml")), "v1.32.9-eks-1a2b3c4")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.33"))
	al2 := byTitle(fs, "Amazon Linux 2 on pool")
	if len(al2) != 1 || al2[0].Severity != finding.High || al2[0].Preflight != finding.PreflightBefore ||
		!checktest.HasObject(al2, "Node", "", "ip-10-0-1-10.ec2.internal") || !checktest.HasObject(al2, "Node", "", "ip-10-0-1-11.ec2.internal") ||
		checktest.HasObject(al2, "Node", "", "ip-10-0-2-20.ec2.internal") || !citesCase(al2[0], "eks-amazon-linux-2-ami-end-of-support-2025") {
		t.Errorf("AL2 at 1.33: %+v", al2)
	}
	if n := ctx.Notes()[ruleNodeOSAtTarget]; n.Reason != "" {
		t.Errorf("every OS identified, yet: %+v", n)
	}
	s = at(checktest.Complete(checktest.Load(t, "eks-al2.yaml")), "v1.31.9-eks-1a2b3c4")
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.32"))
	if got := byTitle(fs, "does not offer it"); len(got) != 0 {
		t.Errorf("AL2 is offered at 1.32: %+v", got)
	}
}

// TestDaemonSetOnlyNodes: good-1 runs only a DaemonSet and a mirror pod;
// the nodes with no pods at all drain at once too; good-2 runs an app.
func TestDaemonSetOnlyNodes(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "node-requirements.yaml")), "v1.25.16")
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.26"))
	ds := byTitle(fs, "only DaemonSet and mirror pods")
	if len(ds) != 1 || ds[0].Severity != finding.Info || ds[0].Preflight != finding.PreflightDuring {
		t.Fatalf("DaemonSet-only finding: %+v", ds)
	}
	if !checktest.HasObject(ds, "Node", "", "good-1") || checktest.HasObject(ds, "Node", "", "good-2") ||
		!strings.Contains(ds[0].Message, "pool agentpool=good: 1 node") || !strings.Contains(ds[0].Title, "5 nodes") {
		t.Errorf("DaemonSet-only finding: %s / %s", ds[0].Title, ds[0].Message)
	}
}

// TestNodeRequirementFactsSourced: a runtime or OS row without an https
// source is refused.
func TestNodeRequirementFactsSourced(t *testing.T) {
	base := "judgesTargetsThrough: {minor: '1.38', sources: [https://x]}\nkubeletRefusesCgroupV1From: {minor: '1.35', sources: [https://x]}\n"
	for name, doc := range map[string]string{
		"containerd": "runtimeAtTarget: {containerdBelow: [{kubeletFrom: '1.26', below: '1.6.0'}]}",
		"dockershim": "runtimeAtTarget: {dockershimRemovedIn: {minor: '1.24', sources: [http://x]}}",
		"os":         "nodeOSAtTarget: [{provider: eks, distro: Amazon Linux, version: '2', from: '1.33', case: c}]",
		"os-case":    "nodeOSAtTarget: [{provider: eks, distro: Amazon Linux, version: '2', from: '1.33', sources: [https://x]}]",
	} {
		if _, err := parseFacts([]byte(base + doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := parseFacts([]byte(base + "nodeOSAtTarget: [{provider: eks, distro: Amazon Linux, version: '2', from: '1.33', case: c, sources: [https://x]}]")); err != nil {
		t.Errorf("a sourced row refused: %v", err)
	}
}

func citesCase(f finding.Finding, id string) bool {
	for _, c := range f.Cases {
		if c == id {
			return true
		}
	}
	return false
}

// TestNodeOSAtTargetAKSWindows: going to 1.33 names the Windows Server 2019
// pool and not the 2022 one, which AKS supports until 1.37.
func TestNodeOSAtTargetAKSWindows(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "aks-windows.yaml")), "v1.32.7")
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.33"))
	got := byTitle(fs, "does not offer it")
	if len(got) != 1 || !checktest.HasObject(got, "Node", "", "akswin19000000") || checktest.HasObject(got, "Node", "", "akswin22000000") ||
		!strings.Contains(got[0].Title, "Windows Server 2019") {
		t.Errorf("Windows at 1.33: %+v", got)
	}
}
