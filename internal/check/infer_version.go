package check

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// CurrentVersion is what the input proves about the control plane's
// version: exactly (the API server's own answer, a kube-apiserver mirror
// pod's image) or as a range between a lower bound (the newest kubelet or
// kube-proxy: neither may be newer than the API server, version skew
// policy) and an upper bound (below an upgrade's target).
type CurrentVersion struct {
	// Exact is set when the input states the version.
	Exact bool
	// Lower and Upper bound the minor; Lower is zero when nothing in the
	// input bounds it from below, Upper when nothing does from above.
	Lower, Upper KubeVersion
	// Basis says, in one line, what the bounds come from.
	Basis string
}

// Known reports whether the minor is bounded from below (exact or not).
func (c CurrentVersion) Known() bool { return c.Lower != (KubeVersion{}) }

// Text is "1.34", or "1.32 to 1.34", or "below 1.35".
func (c CurrentVersion) Text() string {
	switch {
	case c.Exact || (c.Known() && c.Upper != (KubeVersion{}) && c.Lower.Minor == c.Upper.Minor && c.Lower.Major == c.Upper.Major):
		return c.Lower.MinorString()
	case c.Known() && c.Upper != (KubeVersion{}):
		return c.Lower.MinorString() + " to " + c.Upper.MinorString()
	case c.Known():
		return c.Lower.MinorString() + " or later"
	case c.Upper != (KubeVersion{}):
		return "at most " + c.Upper.MinorString()
	}
	return "unknown"
}

// InferCurrentVersion says what the input proves about the control
// plane's version. With a target (an upgrade preflight), the control plane
// is taken to be below it: a preflight to a version the cluster already
// runs is not asked for, and the basis says when that is the only
// evidence from above.
func InferCurrentVersion(s *snapshot.Snapshot, target *KubeVersion) CurrentVersion {
	if v, ev, ok := ServerVersion(s); ok {
		return CurrentVersion{Exact: true, Lower: v, Upper: v, Basis: ev}
	}
	var c CurrentVersion
	var basis []string
	// Kubelets are never newer than the API server.
	var newest KubeVersion
	newestNode, nodes := "", 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		v, ok := ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !ok {
			continue
		}
		nodes++
		if newest.Less(v) {
			newest, newestNode = v, n.Name
		}
	}
	if nodes > 0 {
		c.Lower = KubeVersion{Major: newest.Major, Minor: newest.Minor}
		basis = append(basis, fmt.Sprintf("at least %s: the newest kubelet (Node %s status.nodeInfo.kubeletVersion=%s, of %s read), "+
			"and kubelets are never newer than the API server", newest.MinorString(), newestNode,
			kubeletOf(s, newestNode), Plural(nodes, "node", "nodes")))
	}
	// kube-proxy must not be newer than the API server either.
	if v, where, ok := newestKubeProxy(s); ok && c.Lower.Less(KubeVersion{Major: v.Major, Minor: v.Minor}) {
		c.Lower = KubeVersion{Major: v.Major, Minor: v.Minor}
		basis = append(basis, fmt.Sprintf("at least %s: %s, and kube-proxy is never newer than the API server", v.MinorString(), where))
	}
	if target != nil {
		up := KubeVersion{Major: target.Major, Minor: target.Minor - 1}
		c.Upper = up
		if c.Known() && up.Less(c.Lower) {
			// The input proves the control plane at or past the target.
			c.Upper = c.Lower
		} else {
			only := ""
			if !c.Known() {
				only = " (the only evidence of the version: nothing in the input bounds it from below)"
			}
			basis = append(basis, fmt.Sprintf("at most %s: --target-version %s implies the control plane is below it%s",
				up.MinorString(), target.MinorString(), only))
		}
	}
	if len(basis) == 0 {
		c.Basis = "no API server version, kubelet or kube-proxy version in the input"
	} else {
		c.Basis = "no API server version in the input; " + strings.Join(basis, "; ")
	}
	return c
}

func kubeletOf(s *snapshot.Snapshot, node string) string {
	for i := range s.Nodes {
		if s.Nodes[i].Name == node {
			return s.Nodes[i].Status.NodeInfo.KubeletVersion
		}
	}
	return ""
}

// newestKubeProxy is the newest kube-proxy version a DaemonSet or pod
// image tag names, and where it was read.
func newestKubeProxy(s *snapshot.Snapshot) (KubeVersion, string, bool) {
	var best KubeVersion
	where, found := "", false
	judge := func(what, image string) {
		if !strings.HasPrefix(ImageName(image), "kube-proxy") {
			return
		}
		_, tag, _ := ImageParts(image)
		v, ok := ParseKubeVersion(tag)
		if ok && (!found || best.Less(v)) {
			best, where, found = v, fmt.Sprintf("%s image %s", what, image), true
		}
	}
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			judge("DaemonSet "+ds.Namespace+"/"+ds.Name, c.Image)
		}
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		for _, c := range p.Spec.Containers {
			judge("Pod "+p.Namespace+"/"+p.Name, c.Image)
		}
	}
	return best, where, found
}
