package runtime

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

// The cgroup-v2-at-upgrade rule of jvm-cgroup-compat. A managed provider
// may replace a node pool's OS with one that boots cgroup v2 when the pool
// moves to a new minor: AKS 1.25 took Ubuntu 18.04 pools to Ubuntu 22.04,
// and Java runtimes too old to read cgroup v2 limits then sized their heaps
// from the node. On the minor before, the nodes still run cgroup v1 and
// the same runtime works: this rule flags it there, before the upgrade.

// cgroupV2Move is a row of data/jvm-cgroup-compat.yaml's cgroupV2Moves: on
// nodes of provider (check.ManagedProvider) whose osImage starts with
// osImage, the provider's node image is replaced by becomes, which boots
// cgroup v2, once the pool reaches kubernetes minor at.
type cgroupV2Move struct {
	Provider string   `json:"provider"`
	OSImage  string   `json:"osImage"`
	At       string   `json:"at"`
	Becomes  string   `json:"becomes"`
	Sources  []string `json:"sources"`

	at check.KubeVersion
}

func parseCgroupV2Moves(rows []cgroupV2Move) error {
	for i := range rows {
		r := &rows[i]
		v, ok := check.ParseKubeVersion(r.At)
		if !ok || r.Provider == "" || r.OSImage == "" || r.Becomes == "" || len(r.Sources) == 0 {
			return fmt.Errorf("data/jvm-cgroup-compat.yaml: cgroupV2Moves row %d needs provider, osImage, at (a minor), becomes and sources", i)
		}
		r.at = v
	}
	return nil
}

// cgroupV2MoveFor is the move that awaits node n at its next upgrade: its
// provider and OS match a row and its kubelet is below the row's minor.
func (f *jvmFacts) cgroupV2MoveFor(n *corev1.Node) (*cgroupV2Move, string) {
	kv, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
	if !ok {
		return nil, ""
	}
	provider := check.ManagedProvider(n)
	for i := range f.CgroupV2Moves {
		r := &f.CgroupV2Moves[i]
		if provider != r.Provider || !strings.HasPrefix(n.Status.NodeInfo.OSImage, r.OSImage) ||
			!kv.Less(check.KubeVersion{Major: r.at.Major, Minor: r.at.Minor}) {
			continue
		}
		return r, fmt.Sprintf("%s nodes on %s are moved to %s, which boots cgroup v2, when their pool is upgraded to %s (%s)",
			r.Provider, r.OSImage, r.Becomes, r.at.MinorString(), strings.Join(r.Sources, ", "))
	}
	return nil, ""
}

// upgradeFinding fills f for a cgroup-v2-at-upgrade group.
func (g *jvmGroup) upgradeFinding(f *finding.Finding, rt string, ev []string, nodes []*corev1.Node, more int) {
	var kubelets []string
	for _, n := range nodes {
		kubelets = append(kubelets, n.Name+" ("+n.Status.NodeInfo.OSImage+", kubelet "+n.Status.NodeInfo.KubeletVersion+")")
	}
	f.Evidence = append(ev, rt+" "+g.why, g.nodeWhy, fmt.Sprintf("%s: %s%s", check.Plural(len(nodes), "node", "nodes"),
		check.ListText(kubelets, 5), check.MoreText(more)))
	f.Severity = finding.Medium
	f.Title = fmt.Sprintf("%s in %s cannot read cgroup v2 memory limits, and an upgrade moves its nodes to cgroup v2", rt, g.image)
	f.Message = fmt.Sprintf("%s predates cgroup v2 support in its release line. Its nodes boot cgroup v1 today, where it "+
		"sees its container's limit, but their provider replaces the node OS with a cgroup v2 one at a later minor upgrade (the evidence names it): after "+
		"that upgrade it finds no limit, sizes its heap from the node's memory, and is OOM-killed or drives the node into "+
		"memory pressure and evictions, as AKS users saw after moving from 1.24 to 1.25.", rt)
	f.Remediation = "Before upgrading the node pool, rebuild the image on a Java release that reads cgroup v2 (8u372, " +
		"11.0.16, 17 or later for HotSpot), or set the heap explicitly (-Xmx or -XX:MaxRAM) from the container limit."
	f.Cases = []string{caseCgroupV2JRE}
	f.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage),
			finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion)}
	})...)
}
