package check

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/nodeos"
)

// NodeOS is the OS table lookup of every node, by node name: the node
// checks of runtime (host-binary-glibc) and versions (node-os-lifecycle)
// identify the same nodes once each.
type NodeOS map[string]nodeos.Info

// IdentifyNodes looks every node's osImage and kernel up in the OS table.
// Nodes of one osImage and kernel share one lookup (the table's regular
// expressions, tried in order, and a copy of the row's sources): a
// fleet runs a handful of images, each looked up once. The Info values
// are shared between those nodes; their Sources are read-only.
func IdentifyNodes(nodes []corev1.Node) NodeOS {
	type image struct{ osImage, kernel string }
	var seen map[image]nodeos.Info
	var last image
	var lastInfo nodeos.Info
	m := make(NodeOS, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		k := image{n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion}
		if i > 0 && k == last { // the common case: the node before ran the same image
			m[n.Name] = lastInfo
			continue
		}
		info, ok := seen[k]
		if !ok {
			info = nodeos.Identify(k.osImage, k.kernel)
			info.Sources = slices.Clip(info.Sources) // an append by one node never writes into another's
			if seen == nil {
				seen = map[image]nodeos.Info{}
			}
			seen[k] = info
		}
		last, lastInfo = k, info
		m[n.Name] = info
	}
	return m
}
