package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// ruleRemovedBGPPeer judges Calico BGPPeers whose node selectors name a
// label the cluster's release stops applying. Reddit's route reflectors
// were peered this way: the nodeSelector and peerSelector of their
// BGPPeers selected node-role.kubernetes.io/master, and the 1.24 upgrade
// removed that label from the running nodes. Unlike a pod template, a
// peering that selects no node fails silently: nothing stays Pending.
const ruleRemovedBGPPeer = "removed-label-bgp-peer"

// bgpPeerSelectors are the BGPPeer fields that hold a Calico selector
// over Node labels (https://docs.tigera.io/calico/latest/reference/resources/bgppeer).
var bgpPeerSelectors = [...]string{"nodeSelector", "peerSelector"}

// bgpPeerFindings reports, per BGPPeer and removed label it names, either
// that no node carries the label now (high: the peering has no nodes; with
// an incomplete Node list only once the release no longer applies it) or
// that the cluster is before the release that stops applying it (medium:
// the upgrade to that release takes the peering's nodes away).
func bgpPeerFindings(ctx *check.Context, keys []removedKey, v check.KubeVersion, raw, verEv string) []finding.Finding {
	s := ctx.Snapshot
	if !ctx.Complete(snapshot.CalicoBGPPeers) {
		ctx.Incomplete(ruleRemovedBGPPeer, "Calico BGPPeers (crd.projectcalico.org) are not in the input, so peerings selecting removed node labels are not judged")
	}
	if ds := calicoEtcdDaemonSet(s); ds != "" {
		ctx.Incomplete(ruleRemovedBGPPeer, "%s runs Calico on its etcd datastore, where BGPPeers are not Kubernetes API objects: "+
			"the peerings there are not judged", ds)
	}
	nodesComplete := ctx.Complete(snapshot.Nodes)
	var out []finding.Finding
	for _, p := range s.CustomObjects(snapshot.CalicoBGPPeers) {
		for i := range keys {
			k := &keys[i]
			if k.Kind != "label" || k.RemovedIn == "" {
				continue
			}
			var named []finding.Field
			var texts []string
			for _, field := range bgpPeerSelectors {
				sel, _, _ := unstructured.NestedString(p.Object, "spec", field)
				if selectorNamesKey(sel, k.Key) {
					named = append(named, finding.Value("spec."+field, sel))
					texts = append(texts, fmt.Sprintf("spec.%s %q", field, sel))
				}
			}
			if len(named) == 0 {
				continue
			}
			removed, note, sources := k.removedOn(raw)
			carrying := 0
			for j := range s.Nodes {
				if _, ok := s.Nodes[j].Labels[k.Key]; ok {
					carrying++
				}
			}
			ref := finding.ObjectRef{APIVersion: p.GetAPIVersion(), Kind: p.GetKind(), Name: p.GetName()}
			f := finding.Finding{
				Check:   removedLabelsID,
				Rule:    ruleRemovedBGPPeer,
				Objects: []finding.ObjectRef{ref},
				Evidence: []string{
					"the peering selects nodes by " + strings.Join(texts, " and "),
					verEv,
					fmt.Sprintf("%d of the %d nodes in the input carry %s", carrying, len(s.Nodes), k.Key),
					strings.Join(strings.Fields(note), " ") + " (" + strings.Join(sources, " ") + ")",
				},
				Cases: []string{caseReddit},
			}
			switch {
			// With nodes missing from the input, none carrying the label
			// proves nothing before the release that removes it (a missing
			// node may be the route reflector): the upgrade finding below
			// holds either way.
			case carrying == 0 && (nodesComplete || !v.Less(removed)):
				f.Severity = finding.High
				f.Title = fmt.Sprintf("Calico BGPPeer %s selects nodes by %s, which no node carries", p.GetName(), k.Key)
				f.Message = fmt.Sprintf("BGPPeer %s selects nodes by %s, but none of the %s in the input carries it (from %s "+
					"nodes are labelled %s instead): a positive term now matches no node and a negated one matches every node, "+
					"so the BGP sessions it stood for are gone or wrong and pod routes between nodes can vanish, as Reddit's "+
					"route reflector peerings did after the 1.24 upgrade.", p.GetName(), k.Key,
					check.Plural(len(s.Nodes), "node", "nodes"), removed.MinorString(), k.Replacement)
				f.Remediation = fmt.Sprintf("Rewrite the selector on %s (label the route reflector nodes with a key you own "+
					"if they should stay selected), then check calicoctl node status on a node of each side.", k.Replacement)
			case v.Less(removed):
				f.Severity = finding.Medium
				f.Title = fmt.Sprintf("Calico BGPPeer %s selects nodes by %s, which the upgrade to %s removes",
					p.GetName(), k.Key, removed.MinorString())
				f.Message = fmt.Sprintf("BGPPeer %s selects nodes by %s. The cluster is on %s, whose nodes still carry the "+
					"label, but from %s they are labelled %s only, and the upgrade removes the old label from running nodes: "+
					"the peering then selects other nodes than today, and the pod routes it carries can vanish the moment the "+
					"upgrade lands. Reddit's site went down for 314 minutes this way.", p.GetName(), k.Key, raw,
					removed.MinorString(), k.Replacement)
				f.Remediation = fmt.Sprintf("Before upgrading, change the selector to %s or to a label you apply yourself, "+
					"and confirm the BGP sessions with calicoctl node status.", k.Replacement)
			default:
				continue // past the removal, yet some node carries it: labelled by hand
			}
			f.AddEvidence(finding.Quote(ref, named...))
			addNodeGroups(&f, nodePtrs(s.Nodes), func(n *corev1.Node) []finding.Field { return labelsOf(k.Key)(n) })
			out = append(out, f)
		}
	}
	return out
}

// selectorNamesKey reports whether a Calico selector expression names key
// as a label key: has(key), key == 'v', key in {...}, !has(key). A key is
// matched whole, so node-role.kubernetes.io/master-x does not count.
func selectorNamesKey(sel, key string) bool {
	for from := 0; ; {
		i := strings.Index(sel[from:], key)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(key)
		if (i == 0 || !labelKeyByte(sel[i-1])) && (end == len(sel) || !labelKeyByte(sel[end])) {
			return true
		}
		from = i + 1
	}
}

func labelKeyByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("._-/", b) >= 0
}

// calicoEtcdDaemonSet names a DaemonSet in the input whose calico-node
// container is configured for Calico's etcd datastore (DATASTORE_TYPE
// etcdv3, or ETCD_ENDPOINTS set), "" when none is: there the BGPPeers are
// kept in etcd and an empty BGPPeer list in the API proves nothing.
func calicoEtcdDaemonSet(s *snapshot.Snapshot) string {
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if c.Name != "calico-node" && !strings.Contains(c.Image, "calico/node") {
				continue
			}
			for _, e := range c.Env {
				if e.Name == "DATASTORE_TYPE" && e.Value == "etcdv3" || e.Name == "ETCD_ENDPOINTS" && (e.Value != "" || e.ValueFrom != nil) {
					return "DaemonSet " + d.Namespace + "/" + d.Name
				}
			}
		}
	}
	return ""
}
