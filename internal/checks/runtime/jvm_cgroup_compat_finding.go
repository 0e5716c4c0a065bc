package runtime

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

// The findings of jvm-cgroup-compat, one per runtime, image and rule.

func (g *jvmGroup) finding() finding.Finding {
	var nodes []*corev1.Node
	for _, n := range g.nodes {
		if n != nil {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	refs, more := check.NodeRefs(nodes)
	users := g.userOrder
	moreU := 0
	if len(users) > check.MaxListedObjects {
		users, moreU = users[:check.MaxListedObjects], len(users)-check.MaxListedObjects
	}
	objs := append(append([]finding.ObjectRef(nil), users...), refs...)
	rt := fmt.Sprintf("Java %s at %s", g.rt.Version, g.rt.Home)
	ev := []string{
		fmt.Sprintf("--inspect-images: %s carries %s (JAVA_VERSION in %s/release%s)", g.image, rt, g.rt.Home, dateText(g.rt.Date)),
		fmt.Sprintf("run by %s%s", refNames(users), moreUsers(moreU)),
	}
	f := finding.Finding{Check: jvmCompatID, Rule: g.rule, Objects: objs}
	switch g.rule {
	case ruleJVMCgroupV2Upgrade:
		g.upgradeFinding(&f, rt, ev, nodes, more)
		return f
	case ruleJVMCgroupV2:
		ev = append(ev, rt+" "+g.why, g.nodeWhy, fmt.Sprintf("%s: %s%s", check.Plural(len(nodes), "node", "nodes"),
			nodeOSes(nodes), check.MoreText(more)))
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s in %s cannot read cgroup v2 memory limits, on nodes that boot cgroup v2", rt, g.image)
		f.Message = fmt.Sprintf("%s predates cgroup v2 support in its release line. On cgroup v2 nodes it finds no container "+
			"limit and sizes its heap from the node's memory, so the container is OOM-killed at its limit or the node comes "+
			"under memory pressure and evicts pods. The cgroup version is inferred from the node OS's default.", rt)
		f.Remediation = "Rebuild the image on a Java release that reads cgroup v2 (8u372, 11.0.16, 17 or later for HotSpot), " +
			"or set the heap explicitly (-Xmx or -XX:MaxRAM) from the container limit until then."
		f.Cases = []string{caseCgroupV2JRE}
	default:
		ev = append(ev, rt+": "+g.why, fmt.Sprintf("%s with kernel 6.12 or later: %s%s", check.Plural(len(nodes), "node", "nodes"),
			nodeKernels(nodes), check.MoreText(more)))
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("%s in %s may ignore its container limits on kernel 6.12+ nodes (JDK-8349988)", rt, g.image)
		f.Message = fmt.Sprintf("%s decides whether it runs in a container from /proc/cgroups. Kernels from 6.12 may leave the "+
			"cpuset and memory entries out of that file (CONFIG_CPUSETS_V1, CONFIG_MEMCG_V1 are build options the API does "+
			"not show); the JVM then concludes it is not limited and sizes its heap from the node, and is OOM-killed.", rt)
		f.Remediation = "Move the image to a Java release with the JDK-8349988 fix (JDK 25, or an 8/11/17/21 update that " +
			"carries the backport), or set the heap explicitly (-Xmx, or -XX:MaxRAM from the container limit via the Downward API)."
		f.Cases = []string{caseKernel612JVM}
	}
	f.Evidence = ev
	field := nodeField("status.nodeInfo.osImage", func(n *corev1.Node) string { return n.Status.NodeInfo.OSImage })
	if g.rule != ruleJVMCgroupV2 {
		field = nodeField("status.nodeInfo.kernelVersion", func(n *corev1.Node) string { return n.Status.NodeInfo.KernelVersion })
	}
	f.AddEvidence(check.NodeValues(nodes, field)...)
	return f
}

func dateText(d string) string {
	if d == "" {
		return ""
	}
	return ", JAVA_VERSION_DATE " + d
}

func nodeOSes(nodes []*corev1.Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name + " (" + n.Status.NodeInfo.OSImage + ")"
	}
	return check.ListText(names, 5)
}

func nodeKernels(nodes []*corev1.Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name + " (" + n.Status.NodeInfo.KernelVersion + ")"
	}
	return check.ListText(names, 5)
}
