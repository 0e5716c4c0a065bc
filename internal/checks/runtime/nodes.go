// Package runtime holds the checks about what runs under the kubelet: the
// container runtime, the kernel and the CNI agent, and workloads coupled
// to them.
package runtime

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubegap/kubegap/internal/check"
)

// nodeRuntime is a node's container runtime as the kubelet reports it in
// status.nodeInfo.containerRuntimeVersion: "containerd://1.7.13-1".
type nodeRuntime struct {
	Name    string // containerd, cri-o, docker, or what the node says
	Raw     string // the version as reported, vendor suffix included
	Version check.KubeVersion
	Parsed  bool
}

func runtimeOf(n *corev1.Node) (nodeRuntime, bool) {
	s := strings.TrimSpace(n.Status.NodeInfo.ContainerRuntimeVersion)
	name, ver, ok := strings.Cut(s, "://")
	if !ok || name == "" {
		return nodeRuntime{}, false
	}
	rt := nodeRuntime{Name: strings.ToLower(name), Raw: ver}
	rt.Version, rt.Parsed = check.ParseKubeVersion(ver)
	return rt, true
}

// targets reports whether a pod template's nodeSelector and required node
// affinity admit the node. Taints are not considered: DaemonSets commonly
// tolerate them. An operator kubegap does not know admits the node, so
// that coupling is reported rather than missed.
func targets(spec *corev1.PodSpec, n *corev1.Node) bool {
	for k, v := range spec.NodeSelector {
		if n.Labels[k] != v {
			return false
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		if termAdmits(t, n) {
			return true
		}
	}
	return false
}

var nodeOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
	corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
}

func termAdmits(t corev1.NodeSelectorTerm, n *corev1.Node) bool {
	for _, e := range t.MatchExpressions {
		op, ok := nodeOps[e.Operator]
		if !ok {
			continue
		}
		r, err := labels.NewRequirement(e.Key, op, e.Values)
		if err != nil {
			continue
		}
		if !r.Matches(labels.Set(n.Labels)) {
			return false
		}
	}
	for _, f := range t.MatchFields {
		if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn {
			found := false
			for _, v := range f.Values {
				found = found || v == n.Name
			}
			if !found {
				return false
			}
		}
	}
	return true
}
