package runtime

// Helpers of this package's DaemonSet-on-node checks (host-binary-glibc,
// containerd-chained-cni); what node-os-lifecycle and version-skew share
// with them is in internal/check (IdentifyNodes, CountsText).

import (
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
