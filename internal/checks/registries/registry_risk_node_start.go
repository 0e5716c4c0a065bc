package registries

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// nodeStartFindings reports, per registry whose outages stopped node
// starts and upgrades (a singlePoints row with nodeStart), the DaemonSets
// and the static control-plane pods that pull from it. Their pull policy
// does not matter: a new node has none of their images yet, and a kubeadm
// upgrade pulls the new version's control-plane images on every
// control-plane node. Low: a mirror configured in the container runtime,
// which the API does not show, takes the registry out of the path. A row
// whose case the single-point finding already cites (coveredCase) is left
// to that medium finding.
func nodeStartFindings(facts *registryFacts, s *snapshot.Snapshot, users []imageUser, coveredCase string) []finding.Finding {
	var out []finding.Finding
	for _, sp := range facts.SinglePoints {
		if sp.NodeStart == "" || sp.Case == coveredCase {
			continue
		}
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		daemonSets, static := 0, 0
		note := func(ref finding.ObjectRef, role, container string, item finding.EvidenceItem) {
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, ref)
			}
			if len(ev) < check.MaxEvidence {
				ev = append(ev, fmt.Sprintf("%s (%s): container %s", ref, role, container))
				items = append(items, item)
			}
		}
		for i := range users {
			u := &users[i]
			if !u.daemonSet {
				continue
			}
			for _, ci := range u.images {
				if ci.image != "" && !check.IsTemplated(ci.image) && registryHost(ci.image) == sp.Host {
					daemonSets++
					note(u.ref, "DaemonSet: every new node pulls it", ci.container, u.imageQuote(ci))
					break
				}
			}
		}
		// Static pods are kube-system's: the index's pods of that
		// namespace, in the input's order, not a walk of every pod.
		for _, p := range s.Index().PodsInNamespace("kube-system") {
			if !ownedByNode(p) {
				continue
			}
			for j := range p.Spec.Containers {
				c := &p.Spec.Containers[j]
				if c.Image == "" || registryHost(c.Image) != sp.Host {
					continue
				}
				static++
				ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
				note(ref, "static pod: an upgrade pulls the new version's image", c.Name,
					finding.Quote(ref, finding.Value(check.ContainerField("Pod", check.Containers, c.Name, "image"), c.Image)))
				break
			}
		}
		if daemonSets+static == 0 {
			continue
		}
		var what []string
		if daemonSets > 0 {
			what = append(what, check.Plural(daemonSets, "DaemonSet", "DaemonSets"))
		}
		if static > 0 {
			what = append(what, check.Plural(static, "static control-plane pod", "static control-plane pods"))
		}
		ev = append([]string{fmt.Sprintf("%s; %s; sources: %s", sp.What, sp.NodeStart, strings.Join(sp.Sources, " "))}, ev...)
		f := finding.Finding{
			Check:    "registry-risk",
			Severity: finding.Low,
			Title:    fmt.Sprintf("%s %s from %s at node start or upgrade", strings.Join(what, " and "), map[bool]string{true: "pulls", false: "pull"}[daemonSets+static == 1], sp.Host),
			Message: fmt.Sprintf("These pull their images from %s whatever their pull policy: a new node (a replacement, a scale-up) "+
				"has none of its DaemonSets' images yet, and a kubeadm upgrade pulls the new control-plane images on every "+
				"control-plane node. While %s fails for this cluster's region or blocks its nodes' addresses, new nodes come up "+
				"without these pods and the upgrade stops at its image pulls. A registry mirror configured in the container "+
				"runtime would take %s out of the path; the API does not show one.", sp.Host, sp.Host, sp.Host),
			Objects:  objs,
			Evidence: ev,
			Remediation: "Mirror these images into a registry you control, or put a pull-through cache in front and point the " +
				"container runtime's mirror configuration at it; for kubeadm, set imageRepository to the mirror and pre-pull " +
				"with kubeadm config images pull before an upgrade.",
			Cases: []string{sp.Case},
		}
		f.AddEvidence(items...)
		out = append(out, f)
	}
	return out
}

// ownedByNode: a mirror pod of a static pod, which the kubelet creates
// with its Node as owner.
func ownedByNode(p *snapshot.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "Node" {
			return true
		}
	}
	return false
}
