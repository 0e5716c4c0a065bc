package check

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/nodeos"
)

// NodeOS is the OS table lookup of every node, by node name: the node
// checks of runtime (host-binary-glibc) and versions (node-os-lifecycle)
// identify the same nodes once each.
type NodeOS map[string]nodeos.Info

// IdentifyNodes looks every node's osImage and kernel up in the OS table.
func IdentifyNodes(nodes []corev1.Node) NodeOS {
	m := make(NodeOS, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		m[n.Name] = nodeos.Identify(n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion)
	}
	return m
}
