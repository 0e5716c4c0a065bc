package upgrade

// upgrade-preflight: the cgroup v1 rule (nodes that boot cgroup v1 at a target
// that no longer supports it).

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
)

// cgroupV1At finds nodes whose OS boots cgroup v1 by default when the
// target's kubelet refuses to start on cgroup v1.
func cgroupV1At(ctx *check.Context, f *facts, t check.KubeVersion) []finding.Finding {
	if t.Less(f.cgroupV1Refused) {
		return nil
	}
	s := ctx.Snapshot
	byOS := map[string][]*corev1.Node{}
	var unknown []string
	var osl check.OSLookup // a pool's nodes share one table lookup
	var last nodeos.Info   // the OS bootsCgroupV1 last judged, and its answer
	var judged, lastV1, lastDecided bool
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !belowTarget(n, t) {
			continue // its kubelet already runs the target
		}
		if n.Status.NodeInfo.OperatingSystem == "windows" || n.Labels["kubernetes.io/os"] == "windows" {
			continue
		}
		info := osl.Identify(n)
		if !judged || info.Known != last.Known || info.Distro != last.Distro || info.Version != last.Version {
			last, judged = info, true
			lastV1, lastDecided = bootsCgroupV1(f, info) // its release's versions parsed once per run of nodes
		}
		v1, decided := lastV1, lastDecided
		switch {
		case !decided:
			unknown = append(unknown, n.Name)
		case v1:
			byOS[info.Name()] = append(byOS[info.Name()], n)
		}
	}
	if len(unknown) > 0 {
		ctx.Unknowable(ruleCgroupV1, "the default cgroup version of the OS of %s is not in kubegap's table", check.Plural(len(unknown), "node", "nodes"))
	}
	var out []finding.Finding
	for _, os := range slices.Sorted(maps.Keys(byOS)) {
		nodes := byOS[os]
		refs, more := check.NodeRefs(nodes)
		ev := append([]string{}, f.KubeletRefusesCgroupV1From.Sources...)
		ev = append([]string{fmt.Sprintf("kubelet %s and later refuse to start on cgroup v1 unless failCgroupV1 is false", f.cgroupV1Refused.MinorString()),
			fmt.Sprintf("%s boots cgroup v1 by default (cgroup v2 is the default only from the releases listed at https://kubernetes.io/docs/concepts/architecture/cgroups/)", os)}, ev...)
		fd := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore,
			Title: fmt.Sprintf("%s %s, which boots cgroup v1: kubelet %s refuses to start there", nodesRun(len(nodes)), os, t.MinorString()),
			Message: fmt.Sprintf("%s %s, whose default is cgroup v1. From %s the kubelet fails at start on a cgroup v1 host unless its "+
				"configuration sets failCgroupV1: false, so these nodes go NotReady when their kubelet reaches %s. (A node switched "+
				"to cgroup v2 by hand is not affected; the API does not show which cgroup version a node runs.)%s",
				nodesRun(len(nodes)), os, f.cgroupV1Refused.MinorString(), t.MinorString(), check.MoreText(more)),
			Objects: refs, Evidence: ev,
			Remediation: "Move these pools to an OS image that boots cgroup v2 (Ubuntu 22.04 or later, Debian 11 or later, RHEL 9 " +
				"family, Azure Linux, Amazon Linux 2023, COS) before upgrading their kubelet, or, as a stopgap, set failCgroupV1: " +
				"false in the kubelet configuration.",
			Cases: []string{caseCgroupV1},
		}
		fd.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
			return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
		})...)
		out = append(out, fd)
	}
	return out
}

// bootsCgroupV1 says whether an OS release boots cgroup v1 by default:
// releases of a tabled distribution before its first cgroup-v2 release.
// decided is false for OSes the table does not cover.
func bootsCgroupV1(f *facts, info nodeos.Info) (v1, decided bool) {
	if !info.Known {
		return false, false
	}
	for _, d := range f.CgroupV2DefaultFrom {
		if d.Distro != info.Distro {
			continue
		}
		have, err1 := nodeos.ParseVersion(info.Version)
		from, err2 := nodeos.ParseVersion(d.Version)
		if err1 != nil || err2 != nil {
			return false, false
		}
		return have.Less(from), true
	}
	switch info.Distro {
	case "Container-Optimized OS", "Azure Linux", "Bottlerocket", "Flatcar Container Linux", "Talos Linux":
		// Not in the Kubernetes list; their own documentation is not in
		// the table yet, so say nothing rather than guess.
		return false, false
	}
	return false, false
}
