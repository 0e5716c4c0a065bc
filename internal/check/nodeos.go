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

// IdentifyNodes looks every node's osImage and kernel up in the OS table,
// through one OSLookup: a fleet runs a handful of images, each looked up
// once.
func IdentifyNodes(nodes []corev1.Node) NodeOS {
	var l OSLookup
	m := make(NodeOS, len(nodes))
	for i := range nodes {
		m[nodes[i].Name] = l.Identify(&nodes[i])
	}
	return m
}

// OSLookup identifies nodes in the OS table (nodeos.Identify), one lookup
// (the table's regular expressions, tried in order, and a copy of the
// row's sources) per distinct osImage and kernel: a check that asks for
// every node of a large fleet pays for its few images. The Info values
// are shared between the nodes of one image; their Sources are
// read-only. The zero value is ready to use; it is not safe for
// concurrent use.
type OSLookup struct {
	seen     map[osImage]nodeos.Info
	last     osImage
	lastInfo nodeos.Info
	used     bool
}

type osImage struct{ osImage, kernel string }

// Identify is nodeos.Identify of the node's osImage and kernelVersion.
func (l *OSLookup) Identify(n *corev1.Node) nodeos.Info {
	k := osImage{n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion}
	if l.used && k == l.last { // the common case: the node before ran the same image
		return l.lastInfo
	}
	info, ok := l.seen[k]
	if !ok {
		info = nodeos.Identify(k.osImage, k.kernel)
		info.Sources = slices.Clip(info.Sources) // an append by one node never writes into another's
		if l.seen == nil {
			l.seen = map[osImage]nodeos.Info{}
		}
		l.seen[k] = info
	}
	l.last, l.lastInfo, l.used = k, info, true
	return info
}
