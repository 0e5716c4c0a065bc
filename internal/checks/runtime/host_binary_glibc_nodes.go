package runtime

// Helpers of this package's DaemonSet-on-node checks (host-binary-glibc,
// containerd-chained-cni); what node-os-lifecycle and version-skew share
// with them is in internal/check (IdentifyNodes, CountsText).

import (
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
)

// targetNodes returns the nodes of the snapshot a DaemonSet's pods land on
// (check.DaemonSetPlacement: nodeSelector, required affinity, taints).
func targetNodes(ds *appsv1.DaemonSet, nodes []corev1.Node) []*corev1.Node {
	p := check.DaemonSetPlacement(ds)
	return p.Nodes(nodes)
}

// dedupeStrings returns the distinct strings of s, sorted.
func dedupeStrings(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
