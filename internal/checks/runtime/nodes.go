// Package runtime holds the checks about what runs under the kubelet: the
// container runtime, the kernel and the CNI agent, and workloads coupled
// to them.
package runtime

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

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
// affinity admit the node (check.Placement, shared by every check that
// counts the nodes a template lands on). Taints are not considered:
// DaemonSets commonly tolerate them.
func targets(spec *corev1.PodSpec, n *corev1.Node) bool {
	p := check.PodSpecPlacement(spec)
	return p.MatchesSelection(n)
}
