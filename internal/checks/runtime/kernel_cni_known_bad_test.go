package runtime

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestKernelCNIKnownBadGap(t *testing.T) {
	s := checktest.Load(t, "kernel-cni-known-bad/gap.yaml")
	fs, _, ok := checktest.Run(t, kernelCNIKnownBadCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string]string{ // node -> row ID, severity
		"centos-0":        "centos7-kmem-cgroup-leak medium",
		"flatcar-0":       "flatcar-3033.2.2-cilium-ipsec medium",
		"fcos-next-0":     "kernel-7.2-cilium-1.20-set-retval high",
		"ubuntu2004-0":    "calico-3.27.3-3.28.0-ubuntu-2004-kernel-5.4 high",
		"aks-nodepool1-0": "aks-containerd-1.4.4-density high",
		"flatcar2605-0":   "systemd-245-rp-filter-cilium-before-1.10.13 medium",
		"ip-10-0-1-17.eu-west-1.compute.internal": "eks-al2-ami-v20221027-recalled-kernel high",
		"k0s-worker-0": "containerd-1.6.9-1.6.14-sandbox-ip-lost-on-restart high",
	}
	for node, w := range want {
		id, sev, _ := strings.Cut(w, " ")
		got := findingsFor(fs, node)
		if len(got) != 1 || !strings.Contains(got[0].Title, id) || got[0].Severity.String() != sev {
			t.Errorf("%s: %v, want one %s finding for %s", node, got, sev, id)
		}
	}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d", len(fs), len(want))
	}
}

func TestKernelCNIKnownBadAKSSparseNodeIsMedium(t *testing.T) {
	s := checktest.Load(t, "kernel-cni-known-bad/gap.yaml")
	for i := range s.Nodes {
		if s.Nodes[i].Name == "aks-nodepool1-0" {
			s.Nodes[i].Status.Allocatable = maps.Clone(s.Nodes[i].Status.Allocatable) // loaded nodes share equal lists
			q := s.Nodes[i].Status.Allocatable["pods"]
			q.Set(30)
			s.Nodes[i].Status.Allocatable["pods"] = q
		}
	}
	fs, _, _ := checktest.Run(t, kernelCNIKnownBadCheck(), s)
	if got := findingsFor(fs, "aks-nodepool1-0"); len(got) != 1 || got[0].Severity != finding.Medium {
		t.Errorf("AKS node with 30 pods: %v, want one medium", got)
	}
}

func TestKernelCNIKnownBadClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "kernel-cni-known-bad/clean.yaml"))
	checktest.Quiet(t, kernelCNIKnownBadCheck(), s)
}

// Open world: a listed kernel with no CNI agent in the input is unknown.
func TestKernelCNIKnownBadUnknownAgentIsPartial(t *testing.T) {
	s := checktest.Load(t, "kernel-cni-known-bad/clean.yaml")
	s.Nodes[0].Status.NodeInfo.KernelVersion = "7.2.1-200.fc44.x86_64"
	s.DaemonSets = nil
	_, ctx, _ := checktest.Run(t, kernelCNIKnownBadCheck(), s)
	if _, ok := ctx.Notes()[ruleNodeCNI]; !ok {
		t.Error("a 7.2 node whose CNI agent is not in the input must leave the CNI rule partial")
	}
}

// The systemd 245 rp_filter rows end at the releases that carry the
// agent-written override: 1.11.6 on Ubuntu 22.04 matches, 1.11.7 does not.
func TestKernelCNIKnownBadRPFilterBoundary(t *testing.T) {
	for image, want := range map[string]int{"quay.io/cilium/cilium:v1.11.6": 1, "quay.io/cilium/cilium:v1.11.7": 0,
		"quay.io/cilium/cilium:v1.10.12": 1, "quay.io/cilium/cilium:v1.10.13": 0} {
		s := checktest.Complete(checktest.Load(t, "kernel-cni-known-bad/clean.yaml"))
		s.DaemonSets[0].Spec.Template.Spec.Containers[0].Image = image
		fs, _, _ := checktest.Run(t, kernelCNIKnownBadCheck(), s)
		if got := findingsFor(fs, "node-1"); len(got) != want {
			t.Errorf("%s on Ubuntu 22.04: %d findings, want %d", image, len(got), want)
		} else if want == 1 && !strings.Contains(got[0].Title, "systemd-245-rp-filter") {
			t.Errorf("%s: %s", image, got[0].Title)
		}
	}
}

// The containerd sandbox-IP row spans 1.6.9 to 1.6.14, vendor suffixes
// included, except k3s's 1.6.14-k3s1, which carried the fix's backport.
func TestKernelCNIKnownBadContainerdSandboxIPBoundary(t *testing.T) {
	for rt, want := range map[string]int{"containerd://1.6.8": 0, "containerd://1.6.9": 1, "containerd://1.6.12-k3s1": 1,
		"containerd://1.6.14": 1, "containerd://1.6.14-k3s1": 0, "containerd://1.6.15": 0, "containerd://1.7.0": 0} {
		s := checktest.Complete(checktest.Load(t, "kernel-cni-known-bad/clean.yaml"))
		for i := range s.Nodes {
			if s.Nodes[i].Name == "node-0" {
				s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = rt
			}
		}
		fs, _, _ := checktest.Run(t, kernelCNIKnownBadCheck(), s)
		got := findingsFor(fs, "node-0")
		if len(got) != want {
			t.Errorf("%s: %d findings, want %d", rt, len(got), want)
		} else if want == 1 && !strings.Contains(got[0].Title, "sandbox-ip-lost-on-restart") {
			t.Errorf("%s: %s", rt, got[0].Title)
		}
	}
}

// Before kubernetes#61937's upgrade to 1.9, the CentOS 7 node on kubelet
// 1.6 is already flagged: the row matches the OS and kernel, which leak
// once an upgrade turns kernel-memory accounting on.
func TestKernelCNIKnownBadCentOS7BeforeKubelet19(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "kernel-cni-known-bad/centos7-before-kubelet-19.yaml"))
	fs, _, _ := checktest.Run(t, kernelCNIKnownBadCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !slices.Contains(fs[0].Cases, "centos7-kmem-accounting-cgroup-leak-2018") {
		t.Fatalf("findings %+v, want one medium citing the CentOS 7 kmem case", fs)
	}
}
