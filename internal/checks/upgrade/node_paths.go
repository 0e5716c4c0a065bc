package upgrade

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/nodeos"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// nodePathDone reports whether the input proves every node already at the
// target: the nodes were read whole, there is at least one, and every
// kubelet reports a version at or past the target's minor. Only then is
// the node path done; a node list from plain files may lack nodes.
func nodePathDone(ctx *check.Context, t check.KubeVersion) ([]*corev1.Node, bool) {
	s := ctx.Snapshot
	if !ctx.Complete(snapshot.Nodes) || len(s.Nodes) == 0 {
		return nil, false
	}
	nodes := make([]*corev1.Node, 0, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if belowTarget(n, t) {
			return nil, false
		}
		nodes = append(nodes, n)
	}
	return nodes, true
}

// noteUpgradeDone says, on the rules of both paths, that the control
// plane and every node are already at the target: evaluated, not partial,
// since nothing of either path is unknown.
func noteUpgradeDone(ctx *check.Context, cp, t check.KubeVersion, nodes []*corev1.Node) {
	ctx.Done(ruleControlPlanePath, "the control plane is already at %s: the control-plane path is done", cp.MinorString())
	ctx.Done(ruleKubeletSkew, "every one of the %s read (a whole-cluster read) runs kubelet %s or later: the node path is done",
		check.Plural(len(nodes), "node", "nodes"), t.MinorString())
}

// nodesDoneUnproven is the note's tail when every node in the input is at
// the target but the input may not hold every node: the node path may be
// done, which it cannot prove.
func nodesDoneUnproven(ctx *check.Context, t check.KubeVersion) string {
	s := ctx.Snapshot
	if len(s.Nodes) == 0 || ctx.Complete(snapshot.Nodes) {
		return ""
	}
	for i := range s.Nodes {
		if belowTarget(&s.Nodes[i], t) {
			return ""
		}
	}
	return fmt.Sprintf("; every node in the input is at %s too, but the input may not hold every node (a whole-cluster read would show whether the node path is done)", t.MinorString())
}

// unknownProviderNodesBelow counts the nodes below minor m (or of an
// unreported version) whose managed provider the input does not show: a
// provider's add-on change may reach them, so they are never passed over.
func unknownProviderNodesBelow(s *snapshot.Snapshot, m check.KubeVersion) int {
	n := 0
	for i := range s.Nodes {
		node := &s.Nodes[i]
		if nodeos.ProviderOf(node.Spec.ProviderID, node.Labels) == nodeos.ProviderUnknown && belowTarget(node, m) {
			n++
		}
	}
	return n
}
