package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// scaleUp is what the snapshot shows of node autoscalers: something that
// could create a node matching a selector that no node matches today.
type scaleUp struct {
	pools         []karpenterPool
	poolsComplete bool
	// karpenterNodes: some node carries karpenter.sh/nodepool, so Karpenter
	// runs here even when its NodePools were not read.
	karpenterNodes bool
	// autoscaler names a cluster-autoscaler Deployment, "" when none.
	autoscaler string
	// managedPools names a provider whose node pools may scale from zero
	// with an autoscaler outside the cluster (GKE, AKS), "" otherwise.
	managedPools string
}

// karpenterPool is a Karpenter NodePool's node template: the labels it puts
// on every node and the requirements its nodes meet.
type karpenterPool struct {
	name   string
	labels map[string]string
	reqs   map[string]requirement
}

func newScaleUp(ctx *check.Context) *scaleUp {
	s := ctx.Snapshot
	su := &scaleUp{poolsComplete: ctx.Complete(snapshot.KarpenterNodePools)}
	for _, u := range s.CustomObjects(snapshot.KarpenterNodePools) {
		su.pools = append(su.pools, poolOf(u))
	}
	for i := range s.Nodes {
		l := s.Nodes[i].Labels
		switch {
		case l["karpenter.sh/nodepool"] != "":
			su.karpenterNodes = true
		case l["cloud.google.com/gke-nodepool"] != "":
			su.managedPools = "GKE node pools"
		case l["kubernetes.azure.com/agentpool"] != "":
			su.managedPools = "AKS node pools"
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if check.ImageName(c.Image) == "cluster-autoscaler" {
				su.autoscaler = fmt.Sprintf("Deployment %s/%s", d.Namespace, d.Name)
			}
		}
	}
	return su
}

func poolOf(u unstructured.Unstructured) karpenterPool {
	p := karpenterPool{name: u.GetName(), reqs: map[string]requirement{}}
	p.labels, _, _ = unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
	reqs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "requirements")
	for _, r := range reqs {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		key, _ := m["key"].(string)
		op, _ := m["operator"].(string)
		var values []string
		if vs, ok := m["values"].([]any); ok {
			for _, v := range vs {
				if s, ok := v.(string); ok {
					values = append(values, s)
				}
			}
		}
		if key != "" {
			p.reqs[key] = requirement{key: key, op: corev1.NodeSelectorOperator(op), values: values}
		}
	}
	return p
}

// karpenterSetsKey reports whether Karpenter may put key on a node without
// the NodePool naming it: the well-known labels it sets from the instance
// it launches. Policy, and deliberately wide (every key under the
// karpenter, kubernetes.io topology and instance namespaces): a selector on
// such a key is given the benefit of the doubt.
func karpenterSetsKey(key string) bool {
	switch key {
	case "kubernetes.io/arch", "kubernetes.io/os", "kubernetes.io/hostname",
		"topology.kubernetes.io/zone", "topology.kubernetes.io/region", "node.kubernetes.io/instance-type":
		return true
	}
	for _, p := range []string{"karpenter.sh/", "karpenter.k8s.aws/", "karpenter.azure.com/"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// mayMatch reports whether the pool could launch a node meeting t: a
// NodePool constrains the labels of the nodes it creates, and Karpenter
// does not launch nodes for pods asking for labels outside them.
func (p karpenterPool) mayMatch(t term) bool {
	for _, r := range t {
		if r.field {
			continue // names are not known before a node exists
		}
		if v, ok := p.labels[r.key]; ok {
			if !r.matches(nodeWith(r.key, v)) {
				return false
			}
			continue
		}
		pr, ok := p.reqs[r.key]
		switch {
		case ok && pr.op == corev1.NodeSelectorOpIn:
			any := false
			for _, v := range pr.values {
				any = any || r.matches(nodeWith(r.key, v))
			}
			if !any {
				return false
			}
		case ok && pr.op == corev1.NodeSelectorOpDoesNotExist:
			if !r.matches(&corev1.Node{}) {
				return false
			}
		case ok, karpenterSetsKey(r.key):
			// NotIn, Exists, Gt, Lt in the pool, or a label Karpenter sets:
			// some node it launches may carry a matching value.
		default:
			if !r.matches(&corev1.Node{}) {
				return false
			}
		}
	}
	return true
}

func nodeWith(key, value string) *corev1.Node {
	n := &corev1.Node{}
	n.Labels = map[string]string{key: value}
	return n
}

// couldCreate says what might create a node for sel, or "" when nothing
// the snapshot shows could.
func (su *scaleUp) couldCreate(sel selection) (how string) {
	for _, p := range su.pools {
		for _, t := range sel.terms {
			if p.mayMatch(t) {
				return fmt.Sprintf("Karpenter NodePool %s can launch nodes that match", p.name)
			}
		}
	}
	switch {
	case (su.karpenterNodes || len(su.pools) > 0) && !su.poolsComplete:
		return "Karpenter runs here, but its NodePools were not read completely: one of them may launch matching nodes"
	case su.autoscaler != "":
		return "cluster-autoscaler runs here (" + su.autoscaler + "): a node group scaled to zero may carry these labels, which the Kubernetes API does not show"
	case su.managedPools != "":
		return su.managedPools + " can autoscale from zero outside the cluster: a pool with no nodes now may carry these labels, which the Kubernetes API does not show"
	}
	return ""
}
